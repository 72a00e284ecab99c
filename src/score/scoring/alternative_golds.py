"""A task's alternative golds (task format 1.2) while scoring: each one's result, checked
against its own pin like the gold's, and the best match of a prediction.

The prediction is compared with the gold first; only if that fails, with each
alternative in order: the first that matches makes it correct, and ``matched_gold``
in results.jsonl says which matched (0 the gold, k the k-th alternative; written for
tasks that have alternatives only).  A reason names the alternative that matched.  An
alternative whose gold fails or drifts settles the instance as the gold's would
(``gold_error``, ``gold_drift``), its reason naming it: a task is scored on every
answer it accepts or not at all.

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["n"], [(1,)])
>>> other = QueryResult.from_rows(["name"], [("one",)])
>>> verdict, matched = best_match(gold, [other], QueryResult.from_rows(["x"], [("one",)]),
...                               "sqlgold", order_matters=False)
>>> verdict.match, matched, verdict.reason.startswith("matches alternative gold 1")
(True, 1, True)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.comparison.compare import compare
from score.comparison.profiles.base import Verdict
from score.execution.result import QueryError, QueryResult
from score.scoring import decision


def alternative_results(
    task: Mapping[str, Any], gold_cache: Any, pins: Any, today: Any
) -> list[QueryResult] | decision.Decision:
    """Each alternative gold's result (through the gold cache, checked against its
    pin), or the decision of the first that fails or drifts."""
    out: list[QueryResult] = []
    for i, alternative in enumerate(task.get("alternative_golds") or (), start=1):
        result = gold_cache.result(alternative["gold_sql"], today=today)
        drift = None
        if not isinstance(result, QueryError):
            pinned = {**alternative, "order_matters": task["order_matters"]}
            drift = pins.drift(pinned, result, gold_cache.key(alternative["gold_sql"], today))
        decided = decision.for_gold(result, drift)
        if decided is not None:
            return decision.Decision(decided.outcome, f"alternative gold {i}: {decided.reason}")
        assert isinstance(result, QueryResult)
        out.append(result)
    return out


def best_match(
    gold: QueryResult,
    alternatives: Sequence[QueryResult],
    predicted: QueryResult,
    profile: str,
    *,
    order_matters: bool,
) -> tuple[Verdict, int]:
    """The verdict against the gold, or against the first alternative that matches;
    and which matched (0 the gold or none, k the k-th alternative)."""
    verdict = compare(gold, predicted, profile, order_matters=order_matters)
    if verdict.match:
        return verdict, 0
    for i, other in enumerate(alternatives, start=1):
        found = compare(other, predicted, profile, order_matters=order_matters)
        if found.match:
            return Verdict(True, f"matches alternative gold {i}: {found.reason}"), i
    if alternatives:
        n = len(alternatives)
        return Verdict(False, f"{verdict.reason} (nor any of {n} alternative gold(s))"), 0
    return verdict, 0
