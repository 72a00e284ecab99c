"""Pairs (:mod:`score.suite.pairs`): persons whose two events of a gold's concepts lie a
named span apart, a day more or less, or in the other order, so that a near miss that
moves the span's bound by a day, or takes the other end, is told apart.  Checked with
DuckDB on the rows a variant would hold."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
import pyarrow as pa

from score.suite.pairs import MAX_PAIRS, add_pairs, pair_offsets

GOLD = (
    "SELECT COUNT(DISTINCT er.person_id) FROM visit_occurrence er "
    "JOIN visit_occurrence ip ON ip.person_id = er.person_id AND ip.visit_concept_id = 9201 "
    "AND DATE_DIFF('day', er.visit_start_date, ip.visit_start_date) BETWEEN {} AND {} "
    "WHERE er.visit_concept_id = 9203"
)


def _count(sql: str, rows: list[dict]) -> int:
    con = duckdb.connect()
    try:
        con.register("visit_occurrence", pa.Table.from_pylist(rows))
        return con.execute(sql).fetchone()[0]
    finally:
        con.close()


def _variant() -> dict[str, list[dict]]:
    return {
        "person": [{"person_id": 1, "year_of_birth": 1950}],
        "observation_period": [
            {
                "observation_period_id": 1,
                "person_id": 1,
                "observation_period_start_date": dt.date(2010, 1, 1),
                "observation_period_end_date": dt.date(2011, 1, 1),
            }
        ],
        "visit_occurrence": [],
    }


def test_pairs_tell_a_span_moved_by_a_day_apart():
    out = _variant()
    add_pairs(
        out,
        "visit_occurrence",
        "visit_concept_id",
        "visit_start_date",
        "visit_end_date",
        [9203, 9201],
        [1],
        lambda table, row: row,
        random.Random(0),
    )
    rows = out["visit_occurrence"]
    gold = _count(GOLD.format(0, 1), rows)
    assert gold > 0
    for near in ((-1, 1), (0, 2), (1, 1), (0, 0)):  # int_minus_1, int_plus_1 at each bound
        assert _count(GOLD.format(*near), rows) != gold, near
    # each pair's person is new, with a period that holds both events
    periods = {p["person_id"]: p for p in out["observation_period"]}
    for r in rows:
        period = periods[r["person_id"]]
        start, end = period["observation_period_start_date"], period["observation_period_end_date"]
        assert start <= r["visit_start_date"] <= end
    assert len(out["person"]) == 1 + min(MAX_PAIRS, 4 * len(pair_offsets([1])))


def test_no_person_with_a_period_adds_nothing():
    out = _variant()
    out["observation_period"] = []
    add_pairs(
        out,
        "visit_occurrence",
        "visit_concept_id",
        "visit_start_date",
        None,
        [1],
        [1],
        lambda t, r: r,
        random.Random(0),
    )
    assert out["visit_occurrence"] == [] and len(out["person"]) == 1
