"""What every profile takes and gives: task flags in, a :class:`Verdict` out.

>>> Verdict(False, "predicted has 2 columns, gold 3")
Verdict(match=False, reason='predicted has 2 columns, gold 3')
>>> bool(Verdict(True, "same rows"))
True
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from score.comparison.values import Tolerance
from score.execution.result import QueryResult


@dataclass(frozen=True)
class Verdict:
    """Whether a prediction's result matches the gold result, and why (for humans)."""

    match: bool
    reason: str

    def __bool__(self) -> bool:
        return self.match


@dataclass(frozen=True)
class Flags:
    """The task's flags a profile may read.

    ``order_matters``: the gold asks for an order (see
    :func:`score.comparison.order_matters.order_matters`). ``condition_cols``: 0-based
    positions of the gold columns that must be matched (Spider 2.0's ``condition_cols``);
    None means every gold column.
    ``tolerance``: numeric tolerance for profiles that take one (None: the profile's own).
    ``tie_k``: how many rows a tie-set task asks for (``any_k_from_tie_set``).
    """

    order_matters: bool = False
    condition_cols: tuple[int, ...] | None = None
    tolerance: Tolerance | None = None
    tie_k: int | None = None


Comparator = Callable[[QueryResult, QueryResult, Flags], Verdict]


def crash(peer: str, why: str) -> Verdict:
    """The verdict for a case where the peer's own code would raise."""
    return Verdict(False, f"{peer}'s own code would crash here ({why}); scored as no match")


def check_condition_cols(flags: Flags, num_columns: int) -> tuple[int, ...] | None:
    """The condition columns, checked against the gold's width (duplicates dropped);
    None or empty means every column, as in Spider 2.0."""
    if not flags.condition_cols:
        return None
    out: list[int] = []
    for i in flags.condition_cols:
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < num_columns:
            raise ValueError(
                f"condition column {i!r} is not a 0-based position of the gold's "
                f"{num_columns} columns"
            )
        if i not in out:
            out.append(i)
    return tuple(out)
