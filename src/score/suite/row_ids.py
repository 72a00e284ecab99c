"""The ids of a variant's rows: the next one for a new row (one a gold names first), and
the shuffle that gives each table's rows their ids against the persons' order.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

Row = dict[str, Any]


def next_id(
    rows: Sequence[Row], table: str, focus: Mapping[tuple[str, str], Sequence[Any]] | None
) -> int:
    """The id of the next row of ``table``: one the gold names first
    (``device_exposure_id = 45768171``), then the next free number."""
    key = f"{table}_id"
    named = [v for v in (focus or {}).get((table, key), ()) if isinstance(v, int) and 0 < v < 2**63]
    if not named:
        return len(rows) + 1
    used = {r[key] for r in rows}
    free = next((v for v in named if v not in used), None)
    if free is not None:
        return free
    n = len(rows) + 1
    while n in used:
        n += 1
    return n


def renumber(out: dict[str, list[Row]], rng: random.Random) -> None:
    """Give each table's rows (not persons') their ids in a shuffled order, visits'
    references following: ids then run against the persons' order, so a tie broken by
    the row's id is told apart from one broken by its person."""
    moved: dict[str, dict[int, int]] = {}  # visit_occurrence_id, visit_detail_id: old -> new
    for table in sorted(out):
        key = f"{table}_id"
        rows = out[table]
        if table in ("person", "location") or not rows or key not in rows[0]:
            continue
        ids = [r[key] for r in rows]
        shuffled = rng.sample(ids, len(ids))
        if table in ("visit_occurrence", "visit_detail"):
            moved[key] = dict(zip(ids, shuffled, strict=True))
        for row, new_id in zip(rows, shuffled, strict=True):
            row[key] = new_id
    for table, rows in out.items():
        for key, ids in moved.items():
            if table != key.removesuffix("_id"):
                for row in rows:
                    if row.get(key) is not None:
                        row[key] = ids[row[key]]
