"""Does a predicted result match the gold result?  One engine, named profiles.

Each profile is a pure function of (gold result, predicted result, task flags) that
returns a :class:`Verdict` with a reason a human can act on.  ``sqlgold`` (the default)
is sqlgold's own principled rule; the others reproduce a peer benchmark's verdicts,
quirks included (where the peer's own code would crash, the verdict is no match and the
reason says so).

===================== ==========================================================
profile               rule
===================== ==========================================================
sqlgold               :mod:`score.comparison.profiles.sqlgold` (documents every choice)
healthllm             HealthLLM's results_match (seed 000)
spider-ts             Spider test-suite ``result_eq`` (quick_rej quirk included)
spider2               Spider 2.0 ``compare_pandas_table`` after a CSV round trip
ehrsql2024            EHRSQL 2024 ``process_answer`` string equality
snuh                  Synthetic-SNUH's variant of test-suite + EHRSQL (seed 004)
bird                  BIRD EX: set equality of rows, column order matters
set                   BULL / FinSQL EX (seed 001): the same set equality
text2omop             TEXT-TO-OMOP's results_equal: values sorted within each row
any_k_from_tie_set    StreamSQLBench tie adapter over spider2 (needs ``tie_k``)
any_one_argmax        StreamSQLBench tie adapter over spider2: one of the tied rows
===================== ==========================================================

Logical-form exact match compares SQL text, not results:
:func:`score.comparison.profiles.logical_form.logical_form_match`.

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["n", "name"], [(1, "a"), (2, "b")])
>>> pred = QueryResult.from_rows(["label", "k"], [("b", 2), ("a", 1.0)])
>>> compare(gold, pred).match
True
>>> print(compare(gold, pred, "bird").reason)  # doctest: +ELLIPSIS
BIRD set equality: 2 gold row(s) not in the prediction, e.g. (1, 'a'); ...
>>> compare(gold, pred, "nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: unknown comparison profile 'nope'; known profiles: any_k_from_tie_set, ...
"""

from __future__ import annotations

from collections.abc import Sequence

from score.comparison.hashing import hashing_for
from score.comparison.profiles.base import Flags, Verdict
from score.comparison.profiles.registry import PROFILES, Profile, profile_names
from score.comparison.values import Tolerance
from score.execution.result import QueryResult

__all__ = ["PROFILES", "Flags", "Profile", "Tolerance", "Verdict", "compare", "profile_names"]


def get_profile(name: str) -> Profile:
    """The profile called ``name``; ValueError naming the known ones otherwise."""
    try:
        return PROFILES[name]
    except (KeyError, TypeError):
        known = ", ".join(profile_names())
        raise ValueError(f"unknown comparison profile {name!r}; known profiles: {known}") from None


def compare(
    gold: QueryResult | Sequence[QueryResult],
    predicted: QueryResult,
    profile: str = "sqlgold",
    *,
    order_matters: bool = False,
    condition_cols: Sequence[int] | None = None,
    tolerance: Tolerance | tuple[float, float] | None = None,
    tie_k: int | None = None,
) -> Verdict:
    """Compare ``predicted`` with ``gold`` under ``profile``.

    ``gold`` may be a list of acceptable gold results (Spider 2.0's ``_a``/``_b``
    answers): the prediction matches if it matches any.  ``order_matters`` and
    ``condition_cols`` are task flags; a profile whose peer has no such notion ignores
    them, as that peer would.  ``tolerance`` (a :class:`Tolerance` or ``(rel, abs)``) is
    for profiles with a configurable tolerance (sqlgold, healthllm); ``tie_k`` is the
    row count of an ``any_k_from_tie_set`` task.  Options a profile does not take raise
    ValueError, as do unknown profiles.
    """
    prof = get_profile(profile)
    if isinstance(tolerance, tuple):
        tolerance = Tolerance(*tolerance)
    given = {"tolerance": tolerance, "tie_k": tie_k}
    for option, value in given.items():
        if value is not None and option not in prof.takes:
            raise ValueError(f"profile {prof.name!r} does not take {option}")
    if tie_k is not None and (isinstance(tie_k, bool) or not isinstance(tie_k, int) or tie_k < 0):
        raise ValueError(f"tie_k must be a non-negative integer, got {tie_k!r}")
    flags = Flags(
        order_matters=bool(order_matters),
        condition_cols=None if condition_cols is None else tuple(condition_cols),
        tolerance=tolerance,
        tie_k=tie_k,
    )
    golds = [gold] if isinstance(gold, QueryResult) else list(gold)
    if not golds or not all(isinstance(g, QueryResult) for g in golds):
        raise ValueError("gold must be a QueryResult or a non-empty list of them")
    if not isinstance(predicted, QueryResult):
        raise ValueError(f"predicted must be a QueryResult, got {type(predicted).__name__}")
    rows = max(predicted.num_rows, *(g.num_rows for g in golds))
    with hashing_for(rows):
        verdicts = [prof.comparator(g, predicted, flags) for g in golds]
    if len(golds) == 1:
        return verdicts[0]
    for i, v in enumerate(verdicts):
        if v.match:
            return Verdict(True, f"matches gold answer {i + 1} of {len(golds)}: {v.reason}")
    return Verdict(False, f"matches none of {len(golds)} gold answers; first: {verdicts[0].reason}")
