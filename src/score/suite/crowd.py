"""A crowd: as many persons on one concept as a gold's count of persons names.

A gold that compares a count of distinct persons with a number (``HAVING
COUNT(DISTINCT de.person_id) < 200``) is told from its near misses (``<= 200``,
``< 199``) only by a concept that exactly that many persons have, one fewer or one
more, far more than a variant's few persons.  A crowd adds persons, each a copy of a
person the variant has (new id, same demographics) with a copy of that person's first
observation period and one event of the concept on its first day, until that many
persons have the concept in the table.

>>> out = {"person": [{"person_id": 1, "year_of_birth": 1950}],
...        "observation_period": [{"observation_period_id": 1, "person_id": 1,
...            "observation_period_start_date": "2010-01-01",
...            "observation_period_end_date": "2011-01-01"}],
...        "drug_exposure": [{"drug_exposure_id": 1, "person_id": 1, "drug_concept_id": 7}]}
>>> add_crowd(out, "drug_exposure", "drug_concept_id", 7, 3, "drug_exposure_start_date",
...           lambda table, row: row)
>>> sorted({r["person_id"] for r in out["drug_exposure"] if r["drug_concept_id"] == 7})
[1, 2, 3]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

Row = dict[str, Any]
#: the largest count of persons a crowd reaches (rows stay in the hundreds)
MAX_CROWD = 300


def add_crowd(
    out: dict[str, list[Row]],
    table: str,
    column: str,
    concept: Any,
    size: int,
    start_column: str,
    fill: Callable[[str, Row], Row],
) -> None:
    """Add persons to ``out`` until ``size`` persons have ``concept`` in ``table.column``
    (none if as many have it already, or the variant has no person with a period);
    ``fill`` completes an event row's other columns."""
    periods = {r["person_id"]: r for r in out.get("observation_period", [])}
    models = [p for p in out.get("person", []) if p["person_id"] in periods]
    have = {r["person_id"] for r in out[table] if r.get(column) == concept}
    if not models or size <= len(have) or size > MAX_CROWD:
        return
    next_person = max(p["person_id"] for p in out["person"]) + 1
    for n in range(size - len(have)):
        model = models[n % len(models)]
        person_id = next_person + n
        out["person"].append(dict(model, person_id=person_id))
        period = dict(periods[model["person_id"]], person_id=person_id)
        period["observation_period_id"] = len(out["observation_period"]) + 1
        out["observation_period"].append(period)
        day = period["observation_period_start_date"]
        row: Row = {f"{table}_id": len(out[table]) + 1, "person_id": person_id}
        row.update({column: concept, start_column: day, "visit_occurrence_id": None})
        out[table].append(fill(table, row))


def counts_persons(side: exp.Expr) -> bool:
    """``side`` counts distinct persons (``COUNT(DISTINCT x.person_id)``)."""
    for count in side.find_all(exp.Count):
        inner = count.this
        if isinstance(inner, exp.Distinct) and len(inner.expressions) == 1:
            inner = inner.expressions[0]
            if isinstance(inner, exp.Column) and inner.name == "person_id":
                return True
    return False
