"""Pairs: a person's two events of the concepts a gold names, a named span apart or a day off.

A gold that relates two events of one person (an emergency visit followed by an
admission within a day, ``DATE_DIFF('DAY', er.visit_start_date, ip.visit_start_date)
BETWEEN 0 AND 1``; a polypectomy within 30 days after a colonoscopy; the first date of
one condition before the first of another) is told from its near misses (``BETWEEN -1
AND 1``, ``< ... + 30``, ``MAX`` for ``MIN``) only by a person whose two events lie just
inside or just outside the span, and by no other pair of that person's events.  The
rows a variant draws at random seldom make one.  Pairs add persons, each a copy of a
person the variant has (new id, same demographics), with one observation period around
the pair and just the pair: an event of one concept on a day, and one of the same or
another concept (of the same table) that many days later or earlier, for each span the
gold names, a day less and a day more, and a day before; every other person holds, in
turn, a third event of the first concept a week before the first (its first and last
dates differ).  An era lasts ten days.

>>> out = {"person": [{"person_id": 1, "year_of_birth": 1950}],
...        "observation_period": [{"observation_period_id": 1, "person_id": 1,
...            "observation_period_start_date": dt.date(2010, 1, 1),
...            "observation_period_end_date": dt.date(2011, 1, 1)}],
...        "visit_occurrence": []}
>>> add_pairs(out, "visit_occurrence", "visit_concept_id", "visit_start_date",
...           "visit_end_date", [9203, 9201], [1], lambda table, row: row, random.Random(0))
>>> rows = {}
>>> for r in out["visit_occurrence"]:
...     rows.setdefault(r["person_id"], []).append(r)
>>> apart = {(a["visit_concept_id"], b["visit_concept_id"],
...           (b["visit_start_date"] - a["visit_start_date"]).days) for a, b, *_ in rows.values()}
>>> sorted(d for first, second, d in apart if (first, second) == (9203, 9201))
[-1, 0, 1, 2]
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Row = dict[str, Any]
#: the share of the candidates of a gold that names a span that hold pairs
PAIRS = 0.5
#: the most persons pairs add to one variant
MAX_PAIRS = 16
#: how long an era of a pair lasts
ERA_DAYS = 10
#: the day of a pair's first event, where the model person's period does not say
_DAY = dt.date(2016, 3, 14)


def pair_offsets(spans: Sequence[int]) -> list[int]:
    """The days between a pair's two events: each span a gold names, a day less and a
    day more, and a day before (the second event first).

    >>> pair_offsets([0, 1, 2])
    [-1, 0, 1, 2, 3]
    >>> pair_offsets([])
    [-1, 0, 1]
    """
    found = {-1, 0, 1}
    for span in spans:
        found |= {span - 1, span, span + 1}
    return sorted(d for d in found if d >= -1)


def add_named_pairs(
    out: dict[str, list[Row]],
    focus: Mapping[tuple[str, str], Sequence[Any]],
    spans: Sequence[int],
    tables: Sequence[tuple[str, str, str | None]],
    columns: Callable[[str], Sequence[str]],
    fill: Callable[[str, Row], Row],
    rng: random.Random,
) -> None:
    """Pairs of the concepts ``focus`` (a gold's) names in one of ``tables`` (a visit,
    event or era table: name, start and end date columns) the variant holds, ``spans``
    apart; ``columns(table)``: its column names."""
    named = []
    for table, start, end in tables:
        stem = "drug" if table == "dose_era" else table.split("_")[0]
        column = f"{stem}_concept_id"
        concepts = [v for v in focus.get((table, column), ()) if v]
        if table in out and column in columns(table) and concepts:
            named.append((table, column, start, end, concepts))
    if named:
        table, column, start, end, concepts = rng.choice(named)
        add_pairs(out, table, column, start, end, concepts, spans, fill, rng)


def add_pairs(
    out: dict[str, list[Row]],
    table: str,
    concept_column: str,
    start_column: str,
    end_column: str | None,
    concepts: Sequence[Any],
    spans: Sequence[int],
    fill: Callable[[str, Row], Row],
    rng: random.Random,
) -> None:
    """Add persons holding pairs of ``table`` events of ``concepts`` (each ordered pair of
    the first three, the same concept twice too), ``spans`` apart (see
    :func:`pair_offsets`); none if the variant has no person with a period."""
    periods = {r["person_id"]: r for r in out.get("observation_period", [])}
    models = [p for p in out.get("person", []) if p["person_id"] in periods]
    if not models or not concepts or table not in out:
        return
    firsts = list(dict.fromkeys(concepts))[:3]
    combos = [(a, b) for a in firsts for b in firsts]
    rng.shuffle(combos)
    offsets = pair_offsets(spans)
    todo = [(a, b, d) for a, b in combos for d in offsets][:MAX_PAIRS]
    next_person = max(p["person_id"] for p in out["person"]) + 1
    next_period = max(r["observation_period_id"] for r in out["observation_period"]) + 1
    next_row = max((r[f"{table}_id"] for r in out[table]), default=0) + 1
    for n, (first, second, days) in enumerate(todo):
        model = models[n % len(models)]
        person_id = next_person + n
        out["person"].append(dict(model, person_id=person_id))
        start = periods[model["person_id"]]["observation_period_start_date"]
        day = (start if isinstance(start, dt.date) else _DAY) + dt.timedelta(days=30)
        out["observation_period"].append(
            dict(
                periods[model["person_id"]],
                observation_period_id=next_period + n,
                person_id=person_id,
                observation_period_start_date=day - dt.timedelta(days=30),
                observation_period_end_date=day + dt.timedelta(days=max(days, 0) + 60),
            )
        )
        events = [(first, day), (second, day + dt.timedelta(days=days))]
        if n % 2:  # its first and last dates of the first concept differ
            events.append((first, day - dt.timedelta(days=7)))
        for concept, when in events:
            row: Row = {f"{table}_id": next_row, "person_id": person_id}
            next_row += 1
            row.update({concept_column: concept, start_column: when})
            if end_column:
                row[end_column] = when + dt.timedelta(days=ERA_DAYS if "era" in table else 0)
            if "visit_occurrence_id" not in row and table != "visit_occurrence":
                row["visit_occurrence_id"] = None
            out[table].append(fill(table, row))
