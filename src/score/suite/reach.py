"""How far a suite reaches: the golds it can judge and the near misses it cannot.

A gold that returns no row on the base database and on every variant is judged by
nothing but emptiness: any answer that also returns nothing scores correct there, so its
near misses that survive are the suite's blind spot, not rewrites that mean the same.
Golds written for another CDM (persons, concepts and values its authors' database holds)
are the common cause.  Pure bookkeeping over what the build ran.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

#: share of near misses the suite cannot judge above which ``suite build`` warns
WARN_SHARE = 0.10


@dataclass(frozen=True)
class GoldReach:
    """One gold as the build saw it: the tasks that ask it, its text, its row counts on the
    base database and on each kept variant, and its near misses (not equivalent rewrites)
    that ran on the base database and that no variant told apart."""

    task_ids: tuple[str, ...]
    gold_sql: str
    rows_on_base: int
    rows_on_variants: tuple[int, ...]
    near_misses: int
    surviving: int

    @property
    def empty_everywhere(self) -> bool:
        return self.rows_on_base == 0 and not any(self.rows_on_variants)


def reach(golds: Iterable[GoldReach]) -> dict[str, Any]:
    """The tasks and distinct golds that return no row anywhere, and the share of near
    misses that are theirs and survive (the near misses the suite cannot judge).

    >>> empty = GoldReach(("t1", "t2"), "SELECT 1 WHERE 0", 0, (0, 0), 10, 9)
    >>> other_day = GoldReach(("t4",), "SELECT 1 WHERE 0", 0, (0,), 10, 9)
    >>> filled = GoldReach(("t3",), "SELECT 2", 0, (3, 0), 20, 1)
    >>> r = reach([empty, other_day, filled])
    >>> r["tasks_empty_everywhere"], r["distinct_golds"], r["distinct_golds_empty_everywhere"]
    (['t1', 't2', 't4'], 2, 1)
    >>> r["near_misses"], r["near_misses_unjudged"], r["unjudged_share"]
    (40, 18, 0.45)
    >>> warning(r)[:45]
    'the suite cannot judge 18 of 40 near misses ('
    >>> warning(reach([filled])) is None
    True
    """
    golds = list(golds)
    empty = [g for g in golds if g.empty_everywhere]
    distinct: dict[str, bool] = {}
    for g in golds:  # a gold asked in several paraphrases counts once
        distinct[g.gold_sql] = distinct.get(g.gold_sql, True) and g.empty_everywhere
    near_misses = sum(g.near_misses for g in golds)
    unjudged = sum(g.surviving for g in empty)
    return {
        "tasks": sum(len(g.task_ids) for g in golds),
        "tasks_empty_everywhere": sorted(t for g in empty for t in g.task_ids),
        "distinct_golds": len(distinct),
        "distinct_golds_empty_everywhere": sum(distinct.values()),
        "near_misses": near_misses,
        "near_misses_unjudged": unjudged,
        "unjudged_share": unjudged / near_misses if near_misses else 0.0,
    }


def warning(summary: Mapping[str, Any], share: float = WARN_SHARE) -> str | None:
    """The warning ``suite build`` prints on stderr when the suite cannot judge more than
    ``share`` of the near misses; None when it can."""
    if summary["unjudged_share"] <= share:
        return None
    return (
        f"the suite cannot judge {summary['near_misses_unjudged']} of "
        f"{summary['near_misses']} near misses ({100 * summary['unjudged_share']:.1f}%): "
        f"{summary['distinct_golds_empty_everywhere']} of {summary['distinct_golds']} distinct "
        f"golds ({len(summary['tasks_empty_everywhere'])} task(s)) return no row on the base "
        "database or any variant, so any answer that returns nothing scores correct on them "
        "(golds written for another CDM name persons, concepts or values this one lacks); "
        "the tasks are listed in the report"
    )
