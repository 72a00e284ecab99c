"""Twins: rows that tie where a gold breaks a tie, so a near miss that breaks it the
other way (or by a column constant among the tied rows) is told apart.  Checked with
DuckDB on the rows a variant holds."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pyarrow as pa

from score.suite.focus import READS
from score.suite.twins import add_twins, group_twin, row_twins
from score.suite.variant_data import variant_rows

RANKED = (
    "SELECT condition_concept_id, SUM(days) AS total FROM era GROUP BY 1 "
    "ORDER BY total DESC, condition_concept_id {} LIMIT 1"
)
LAGGED = (
    "SELECT measurement_date, value_as_number, LAG(value_as_number) OVER "
    "(ORDER BY measurement_date, measurement_id {}) AS previous FROM measurement "
    "ORDER BY measurement_date, value_as_number"
)


def _run(sql: str, **tables: list[dict]) -> list[tuple]:
    con = duckdb.connect()
    for name, rows in tables.items():
        con.register(name, pa.Table.from_pylist(rows))
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_a_group_twin_ties_two_concepts_on_every_aggregate():
    era = [
        {"condition_era_id": 1, "person_id": 1, "condition_concept_id": 7, "days": 30},
        {"condition_era_id": 2, "person_id": 2, "condition_concept_id": 7, "days": 5},
        {"condition_era_id": 3, "person_id": 2, "condition_concept_id": 8, "days": 1},
    ]
    # without a twin, the tie-breaker's direction changes nothing
    assert _run(RANKED.format("ASC"), era=era) == _run(RANKED.format("DESC"), era=era)
    out = {"condition_era": list(era)}
    group_twin(out, "condition_era", "condition_concept_id", [0, 7, 8, 9, 10], 7)
    twins = out["condition_era"][3:]
    assert [(r["condition_era_id"], r["condition_concept_id"]) for r in twins] == [(4, 9), (5, 9)]
    assert _run(RANKED.format("ASC"), era=out["condition_era"]) == [(7, 35)]
    assert _run(RANKED.format("DESC"), era=out["condition_era"]) == [(9, 35)]
    # no free concept in the pool: nothing copied
    full = {"condition_era": list(era)}
    group_twin(full, "condition_era", "condition_concept_id", [0, 7, 8], 7)
    assert full["condition_era"] == era


def test_row_twins_share_a_person_concept_and_day_and_differ_in_value_and_end():
    day = dt.date(2015, 3, 1)
    rows = [
        {
            "measurement_id": 1,
            "person_id": 3,
            "measurement_concept_id": 5,
            "measurement_date": day,
            "value_as_number": 10.0,
        },
        {
            "measurement_id": 2,
            "person_id": 3,
            "measurement_concept_id": 5,
            "measurement_date": day - dt.timedelta(days=9),
            "value_as_number": 4.0,
        },
    ]
    out = {"measurement": list(rows)}
    same = lambda table, row: {"value_as_number": 10.0, **row}  # noqa: E731
    row_twins(
        out, "measurement", "measurement_concept_id", ("measurement_date", None), rows[:1], same
    )
    twin = out["measurement"][-1]
    assert twin["measurement_id"] == 3 and twin["measurement_date"] == day
    assert twin["value_as_number"] == 11.0  # drawn equal to its row's: one more
    assert _run(LAGGED.format("ASC"), measurement=out["measurement"]) != _run(
        LAGGED.format("DESC"), measurement=out["measurement"]
    )
    visits = {
        "visit_occurrence": [
            {
                "visit_occurrence_id": 1,
                "person_id": 1,
                "visit_concept_id": 9201,
                "visit_start_date": day,
                "visit_end_date": day + dt.timedelta(days=4),
            },
        ]
    }
    row_twins(
        visits,
        "visit_occurrence",
        "visit_concept_id",
        ("visit_start_date", "visit_end_date"),
        visits["visit_occurrence"][:1],
        lambda table, row: row,
    )
    first, twin = visits["visit_occurrence"]
    assert twin["visit_start_date"] == day and twin["visit_end_date"] == day  # ends sooner


def test_row_twins_copy_the_rows_that_meet_the_golds_person_and_concept():
    rows = [
        {
            "measurement_id": i,
            "person_id": p,
            "measurement_concept_id": c,
            "measurement_date": dt.date(2015, 1, i),
        }
        for i, (p, c) in enumerate([(1, 5), (3, 6), (3, 5), (2, 5)], start=1)
    ]
    focus = {("measurement", "person_id"): [3], ("measurement", "measurement_concept_id"): [5]}
    kinds = set()
    for seed in range(20):
        out = {"measurement": [dict(r) for r in rows]}
        add_twins(
            out,
            [("measurement", "measurement_concept_id", ("measurement_date", None))],
            lambda t, c: [5, 6, 7],
            lambda t, c: focus.get((t, c), []),
            random.Random(seed),
            lambda table, row: row,
        )
        twins = out["measurement"][4:]
        kinds.add(twins[0]["measurement_concept_id"])
        if twins[0]["measurement_concept_id"] == 7:  # a group twin of concept 5, all of it
            assert sorted(t["person_id"] for t in twins) == [1, 2, 3]
        else:  # row twins of person 3's concept 5 only
            assert {(t["person_id"], t["measurement_concept_id"]) for t in twins} == {(3, 5)}
    assert kinds == {5, 7}


def test_variants_hold_twins_of_the_tables_their_gold_reads_only():
    pools = {
        ("person", "year_of_birth"): [1950],
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("condition_era", "condition_era_start_date"): [dt.date(2012, 1, 1)],
        ("condition_era", "condition_concept_id"): [11, 12, 13, 14],
        ("drug_era", "drug_era_start_date"): [dt.date(2012, 1, 1)],
        ("drug_era", "drug_concept_id"): [21, 22, 23, 24],
    }
    tables = ["person", "observation_period", "condition_era", "drug_era"]
    focus = {READS: ["condition_era"], ("condition_era", "condition_concept_id"): [11]}
    tied = 0
    for n in range(30):
        rows = variant_rows(pools, tables, f"0:{n}", focus)
        assert rows == variant_rows(pools, tables, f"0:{n}", focus)  # seeded
        for table, column in (
            ("condition_era", "condition_concept_id"),
            ("drug_era", "drug_concept_id"),
        ):
            ids = [r[f"{table}_id"] for r in rows[table]]
            assert len(ids) == len(set(ids))
            assert {r[column] for r in rows[table]} <= set(pools[(table, column)])
        by_concept: dict[int, list] = {}
        for r in rows["condition_era"]:
            by_concept.setdefault(r["condition_concept_id"], []).append(
                (r["person_id"], r["condition_era_start_date"])
            )
        groups = [sorted(v) for v in by_concept.values()]
        tied += any(groups.count(g) > 1 for g in groups)
        assert all(r["drug_concept_id"] in (21, 22, 23, 24) for r in rows["drug_era"])
    assert tied  # some variants hold two concepts with the very same eras
