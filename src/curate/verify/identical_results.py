"""Kept tasks whose gold results are identical: listed, and at most N kept per result if asked.

A task set where many golds return the very same result says little about a model:
DataQualityDashboard's field checks nearly all return ``(0, 0, 1)`` on a clean
database, and a model that learns that row answers all of them.  Each kept gold's
result is hashed with :func:`score.comparison.result_hash.result_sha256` (ordered as the task
orders its rows), the project's canonical result hash; the curation report lists every
group of two or more kept tasks sharing a hash, and rule ``max_per_result`` (off unless
asked) keeps only the first N of a group by id and drops the rest.

>>> groups = result_groups([("b", "h1", 1, "[0]"), ("a", "h1", 1, "[0]"), ("c", "h2", 2, "[1]")])
>>> [(g.sha256, g.ids) for g in groups]
[('h1', ('a', 'b'))]
>>> over_limit([("b", "h1"), ("a", "h1"), ("c", "h1"), ("d", "h2")], 1)
{'b': 'a', 'c': 'a'}
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from score.comparison.result_hash import canonical_rows, result_sha256
from score.execution.result import QueryResult

RULE = "max_per_result"
_HEAD_WIDTH = 200


@dataclass(frozen=True)
class ResultPrint:
    """What identifies a kept gold's result: its hash, size and first row (canonical JSON)."""

    sha256: str
    rows: int
    head: str  # the first row, or the least as text when rows have no order (deterministic)

    @classmethod
    def of(cls, result: QueryResult, *, ordered: bool) -> ResultPrint:
        rows = canonical_rows(result)
        head = (rows[0] if ordered else min(rows)) if rows else ""
        if len(head) > _HEAD_WIDTH:
            head = head[: _HEAD_WIDTH - 3] + "..."
        return cls(result_sha256(result, ordered=ordered), result.num_rows, head)


@dataclass(frozen=True)
class Group:
    sha256: str
    rows: int
    head: str  # the first row, canonical JSON
    ids: tuple[str, ...]  # sorted

    def to_dict(self) -> dict:
        return {
            "sha256": self.sha256,
            "rows": self.rows,
            "first_row": self.head,
            "tasks": len(self.ids),
            "ids": list(self.ids),
        }


def result_groups(kept: Iterable[tuple[str, str, int, str]]) -> list[Group]:
    """Groups of two or more ``(id, sha256, rows, head)`` sharing a hash, largest first."""
    by_hash: dict[str, list[tuple[str, int, str]]] = defaultdict(list)
    for task_id, sha256, rows, head in kept:
        by_hash[sha256].append((task_id, rows, head))
    groups = [
        Group(sha256, members[0][1], members[0][2], tuple(sorted(m[0] for m in members)))
        for sha256, members in by_hash.items()
        if len(members) > 1
    ]
    return sorted(groups, key=lambda g: (-len(g.ids), g.ids[0]))


def over_limit(kept: Iterable[tuple[str, str]], limit: int) -> dict[str, str]:
    """Ids beyond the first ``limit`` (by id) of their result, each with the first id kept."""
    by_hash: dict[str, list[str]] = defaultdict(list)
    for task_id, sha256 in kept:
        by_hash[sha256].append(task_id)
    dropped: dict[str, str] = {}
    for ids in by_hash.values():
        ids.sort()
        for task_id in ids[limit:]:
            dropped[task_id] = ids[0]
    return dict(sorted(dropped.items()))
