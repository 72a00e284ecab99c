"""Values a gold written for another CDM needs before it can return a row: the year of
today it compares a date's year with, the end day it names, and the concepts of a column
the base leaves empty that it joins to the concept table (TEXT-TO-OMOP's golds, issue 56)."""

from __future__ import annotations

import datetime as dt

import duckdb

from score.suite import value_pool
from score.suite.focus import focus_of
from score.suite.variant_data import variant_rows

TODAY = dt.date(2026, 1, 1)


def test_the_year_of_today_gives_the_days_of_that_year() -> None:
    gold = (
        "SELECT vo.visit_start_datetime FROM cdm.visit_occurrence vo WHERE vo.person_id = 7 "
        "AND EXTRACT(YEAR FROM vo.visit_start_datetime) = EXTRACT(YEAR FROM CURRENT_DATE) "
        "ORDER BY vo.visit_start_datetime DESC LIMIT 1 OFFSET 1"
    )
    pools, _, _ = value_pool.gold_constants([gold], today=TODAY)
    days = pools[("visit_occurrence", "visit_start_date")]
    assert dt.date(2026, 1, 1) in days and dt.date(2026, 12, 31) in days
    assert dt.date(2025, 12, 31) in days  # and the day before the year: a near miss's
    # last year's May, from MAKE_DATE over today's year
    gold = (
        "SELECT 1 FROM cdm.visit_occurrence vo WHERE vo.visit_end_datetime >= "
        "MAKE_DATE(CAST(EXTRACT(YEAR FROM CURRENT_DATE) AS INT) - 1, 5, 1)"
    )
    pools, _, _ = value_pool.gold_constants([gold], today=TODAY)
    assert dt.date(2025, 5, 1) in pools[("visit_occurrence", "visit_end_date")]


def test_some_visits_end_on_a_day_the_gold_names() -> None:
    named = dt.date(2025, 5, 17)  # no start in the pool plus a span of the variants
    pools = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2025, 12, 1)],
        ("visit_occurrence", "visit_start_date"): [dt.date(2012, 3, 3), dt.date(2025, 4, 1)],
    }
    focus = {("visit_occurrence", "visit_end_date"): [named]}
    tables = ["person", "observation_period", "visit_occurrence"]
    ending = 0
    for n in range(20):
        rows = variant_rows(pools, tables, f"0:{n}", focus)
        periods = {}
        for p in rows["observation_period"]:
            span = (p["observation_period_start_date"], p["observation_period_end_date"])
            periods.setdefault(p["person_id"], []).append(span)
        for visit in rows["visit_occurrence"]:
            start, end = visit["visit_start_date"], visit["visit_end_date"]
            assert start <= end  # the end never comes before the start, nor leaves the period
            assert any(a <= start and end <= b for a, b in periods[visit["person_id"]])
            ending += end == named
    assert ending > 5
    # without the focus no visit ends there: the named day is what put it there
    rows = [variant_rows(pools, tables, f"0:{n}") for n in range(20)]
    assert not any(v["visit_end_date"] == named for r in rows for v in r["visit_occurrence"])


def test_a_column_the_base_leaves_empty_gets_concepts_where_a_gold_joins_it(omop_db) -> None:
    """device_exposure.unit_concept_id is never filled in the embedded database; a gold
    that joins it to the concept table returned no row on any variant."""
    joined = (
        "SELECT de.quantity, c.concept_name FROM cdm.device_exposure de JOIN cdm.concept c "
        "ON de.unit_concept_id = c.concept_id WHERE de.device_concept_id = 44934545"
    )
    not_joined = "SELECT de.quantity FROM cdm.device_exposure de WHERE de.unit_concept_id = 0"
    con = duckdb.connect(str(omop_db), read_only=True)
    con.execute("SET schema = 'cdm'")
    try:
        base = value_pool.base_pools(con, ["device_exposure", "measurement"])
        domains = value_pool.concept_domains(con, base)
        known = {r[0] for r in con.execute("SELECT concept_id FROM concept").fetchall()}
        focus = focus_of(con, joined, TODAY, base, domains, known)
        other = focus_of(con, "SELECT 1 FROM cdm.device_exposure", TODAY, base, domains, known)
        compared = focus_of(con, not_joined, TODAY, base, domains, known)
    finally:
        con.close()
    assert not any(v is not None for v in base[("device_exposure", "unit_concept_id")])
    found = focus[("device_exposure", "unit_concept_id")]
    # what the base's other unit column holds, each a concept of the vocabulary
    twins = [v for v in base[("measurement", "unit_concept_id")] if v in known]
    assert found and set(found) <= known and set(found) <= set(twins) | {0}
    assert ("device_exposure", "unit_concept_id") not in other
    # a gold that compares the column with a constant keeps its own values
    assert compared[("device_exposure", "unit_concept_id")][0] == 0
