"""A window's tie-breaker no output can see: named only where the tied rows look alike
in every output, and then the rewrite returns the gold's rows on real data."""

from __future__ import annotations

import duckdb
import pytest
from sqlglot import exp, parse_one

from score.suite.neighbours import neighbours
from score.suite.window_ties import unseen_tie_key

FIRST_DATE = (
    "WITH r AS (SELECT person_id, condition_start_date, ROW_NUMBER() OVER (PARTITION BY "
    "person_id ORDER BY condition_start_date, condition_occurrence_id) AS rn "
    "FROM cdm.condition_occurrence) SELECT condition_start_date, COUNT(*) AS n FROM r "
    "WHERE rn = 1 GROUP BY condition_start_date"
)
GAPS = (
    "WITH g AS (SELECT person_id, visit_start_date, LAG(visit_start_date) OVER (PARTITION BY "
    "person_id ORDER BY visit_start_date, visit_occurrence_id) AS prev FROM "
    "cdm.visit_occurrence) SELECT AVG(DATE_DIFF('day', prev, visit_start_date)) FROM g"
)


def _last_key(sql: str) -> exp.Ordered:
    window = parse_one(sql, read="duckdb").find(exp.Window)
    return window.args["order"].expressions[-1]


@pytest.mark.parametrize("sql", [FIRST_DATE, GAPS])
def test_a_tie_breaker_no_output_sees(sql):
    assert unseen_tie_key(_last_key(sql))


@pytest.mark.parametrize(
    "sql",
    [
        # the concept of the first row is an output: the tie decides which one
        "SELECT person_id, condition_concept_id, ROW_NUMBER() OVER (PARTITION BY person_id "
        "ORDER BY condition_start_date, condition_occurrence_id) AS rn "
        "FROM cdm.condition_occurrence",
        # LAG of a column the ORDER BY does not hold alike
        "SELECT person_id, visit_start_date, LAG(visit_end_date) OVER (PARTITION BY person_id "
        "ORDER BY visit_start_date, visit_occurrence_id) FROM cdm.visit_occurrence",
        # RANK tells ties apart by the tie-breaker itself
        "SELECT person_id, RANK() OVER (PARTITION BY person_id ORDER BY visit_start_date, "
        "visit_occurrence_id) FROM cdm.visit_occurrence",
        # a running count over a frame of peers
        "SELECT person_id, COUNT(*) OVER (PARTITION BY person_id ORDER BY visit_start_date, "
        "visit_occurrence_id) FROM cdm.visit_occurrence",
        # the SELECT's own LIMIT picks among the rows
        "SELECT person_id, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY "
        "visit_start_date, visit_occurrence_id) AS rn FROM cdm.visit_occurrence "
        "ORDER BY rn LIMIT 3",
    ],
)
def test_a_tie_breaker_that_shows(sql):
    assert not unseen_tie_key(_last_key(sql))


def test_not_the_last_key():
    window = parse_one(FIRST_DATE, read="duckdb").find(exp.Window)
    assert not unseen_tie_key(window.args["order"].expressions[0])


def _rows(con, sql):
    return sorted(con.sql(sql).fetchall(), key=repr)


def test_named_rewrites_return_the_golds_rows_where_ties_abound(omop_db):
    """On the embedded database, with every event date rounded to its year (ties in
    every person's history), each rewrite named ``ties_unseen`` returns the gold's rows."""
    con = duckdb.connect(":memory:")
    con.execute(f"ATTACH '{omop_db}' AS src (READ_ONLY)")
    con.execute("CREATE SCHEMA cdm")
    con.execute(
        "CREATE TABLE cdm.condition_occurrence AS SELECT * REPLACE "
        "(date_trunc('year', condition_start_date)::DATE AS condition_start_date) "
        "FROM src.cdm.condition_occurrence ORDER BY random()"
    )
    con.execute(
        "CREATE TABLE cdm.visit_occurrence AS SELECT * REPLACE "
        "(date_trunc('year', visit_start_date)::DATE AS visit_start_date) "
        "FROM src.cdm.visit_occurrence ORDER BY random()"
    )
    # the ties are real: where the concept of the first row is an output, the flip shows
    seen = FIRST_DATE.replace(
        "person_id, condition_start_date,", "person_id, condition_concept_id,"
    )
    seen = seen.replace(
        "SELECT condition_start_date, COUNT(*) AS n FROM r",
        "SELECT condition_concept_id, COUNT(*) AS n FROM r",
    ).replace("GROUP BY condition_start_date", "GROUP BY condition_concept_id")
    (flip,) = [n for n in neighbours(seen) if n.edit == "order_flip" and "_id DESC" in n.sql]
    assert flip.equivalent is None
    assert _rows(con, flip.sql) != _rows(con, seen)
    named = 0
    for gold in (FIRST_DATE, GAPS):
        for n in neighbours(gold):
            if n.equivalent == "ties_unseen":
                named += 1
                assert _rows(con, n.sql) == _rows(con, gold), n.sql
    assert named == 4  # the last key swapped and flipped, in each gold
