"""Twins: rows that tie where a gold breaks a tie.

A gold that ranks and breaks ties by an id (``ORDER BY total_days DESC, concept_id``,
``LAG(value) OVER (ORDER BY measurement_date, measurement_id)``) is told from a near
miss that breaks them the other way, or by a column constant where they tie, only on a
database where two of the things it ranks tie.  Random rows seldom tie on a sum or on a
day.  A variant may hold twins of one of the tables a gold reads:

* a **group twin**: every row of one concept copied under another concept of the
  column's pool (same persons, days and values, new ids), so the two concepts tie on
  every count, sum and average per concept;
* **row twins**: a few rows copied with new ids, the same person, concept and days, and
  their other values drawn again, so a person has two rows of one concept on one day.

>>> out = {"condition_era": [
...     {"condition_era_id": 1, "person_id": 1, "condition_concept_id": 7, "n": 2},
...     {"condition_era_id": 2, "person_id": 2, "condition_concept_id": 8, "n": 5}]}
>>> group_twin(out, "condition_era", "condition_concept_id", [7, 9], 7)
>>> [(r["condition_era_id"], r["condition_concept_id"], r["n"]) for r in out["condition_era"]]
[(1, 7, 2), (2, 8, 5), (3, 9, 2)]
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = dict[str, Any]

#: the share of variants that hold twins of a table their gold reads
TWINS = 0.5
#: the most rows a variant's row twins copy
ROW_TWINS = 3


def group_twin(
    out: dict[str, list[Row]], table: str, column: str, pool: Sequence[Any], concept: Any
) -> None:
    """Copy every row of ``table`` whose ``column`` is ``concept`` under the first value
    of ``pool`` that no row of the table has (and is not 0, the CDM's 'no matching
    concept'); nothing if every value is taken."""
    rows = out[table]
    present = {r.get(column) for r in rows}
    twin = next((v for v in pool if v not in present and v not in (0, None)), None)
    if twin is None:
        return
    key = f"{table}_id"
    next_id = largest_id(rows, key) + 1
    for row in [r for r in rows if r.get(column) == concept]:
        rows.append(dict(row, **{column: twin, key: next_id}))
        next_id += 1


def row_twins(
    out: dict[str, list[Row]],
    table: str,
    column: str,
    dates: tuple[str, str | None],
    rows: Sequence[Row],
    fill: Callable[[str, Row], Row],
) -> None:
    """Copy each of ``rows`` (rows of ``table``) with a new id: the same person, visit,
    concept (``column``) and start day (``dates[0]``), another end day where the row
    ends after its start (its start day; else the day after), its other values drawn
    again with ``fill`` and a measured value other than the row's (one more)."""
    key = f"{table}_id"
    start, end = dates
    next_id = largest_id(out[table], key) + 1
    for row in rows:
        copy = {c: row[c] for c in ("person_id", "visit_occurrence_id", column, start) if c in row}
        copy[key] = next_id
        next_id += 1
        if end is not None and row.get(end) is not None and row.get(start) is not None:
            copy[end] = row[start] if row[end] > row[start] else row[end] + dt.timedelta(days=1)
        twin = fill(table, copy)
        value = row.get("value_as_number")
        if value is not None and twin.get("value_as_number") == value:
            twin["value_as_number"] = value + 1
        out[table].append(twin)


def add_twins(
    out: dict[str, list[Row]],
    tables: Sequence[tuple[str, str, tuple[str, str | None]]],
    pools: Callable[[str, str], Sequence[Any]],
    focus: Callable[[str, str], Sequence[Any]],
    rng: random.Random,
    fill: Callable[[str, Row], Row],
) -> None:
    """Twins of one of ``tables`` (each: a table the gold reads, its concept column and
    its start and end date columns) that has rows, half the time each: a group twin of
    its most frequent concept (``pools`` gives the column's pool), or row twins of up to
    :data:`ROW_TWINS` of its rows, those of a concept the gold compares the column with
    and its person where it names one (``focus``), where it has some."""
    candidates = [t for t in tables if out.get(t[0])]
    if not candidates:
        return
    table, column, dates = rng.choice(candidates)
    rows = out[table]
    if rng.random() < 0.5:
        counts: dict[Any, int] = {}
        for r in rows:
            if r.get(column) not in (0, None):
                counts[r[column]] = counts.get(r[column], 0) + 1
        if counts:
            concept = max(sorted(counts, key=repr), key=counts.__getitem__)
            group_twin(out, table, column, pools(table, column), concept)
        return
    named = {c: set(focus(table, c)) for c in ("person_id", column)}
    best = max(_meets(r, named) for r in rows)
    aimed = [r for r in rows if _meets(r, named) == best]
    row_twins(
        out,
        table,
        column,
        dates,
        rng.sample(aimed, min(len(aimed), rng.randint(1, ROW_TWINS))),
        fill,
    )


def _meets(row: Row, named: Mapping[str, set[Any]]) -> int:
    return sum(row.get(c) in values for c, values in named.items())


def largest_id(rows: Sequence[Row], key: str) -> int:
    """The largest ``key`` of ``rows`` (0 if none has one)."""
    return max((r[key] for r in rows if r.get(key) is not None), default=0)
