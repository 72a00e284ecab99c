"""Near misses of a gold, made on sqlglot's tree: each edit class, once per place."""

from __future__ import annotations

import sqlglot

from score.suite.neighbours import neighbours


def _by_edit(sql: str, **kw) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for n in neighbours(sql, **kw):
        found.setdefault(n.edit, []).append(n.sql)
    return found


def test_every_edit_class_of_the_issue_is_made() -> None:
    sql = (
        "SELECT c.concept_name, MIN(co.condition_start_date) AS first_day "
        "FROM cdm.condition_occurrence co JOIN cdm.concept c "
        "ON c.concept_id = co.condition_concept_id "
        "WHERE c.vocabulary_id = 'SNOMED' AND co.condition_start_date >= '2010-01-01' "
        "AND c.concept_name LIKE '%itis' AND co.condition_type_concept_id IN (32020, 32817) "
        "AND (co.person_id > 10 OR co.person_id < 5) "
        "GROUP BY 1 ORDER BY 2 DESC LIMIT 5"
    )
    found = _by_edit(sql)
    for edit in (
        "compare_flip",
        "compare_strict",
        "aggregate_swap",
        "limit_plus_1",
        "limit_minus_1",
        "drop_conjunct",
        "drop_where",
        "order_flip",
        "int_plus_1",
        "and_or",
        "in_not_in",
        "join_side",
        "column_swap",
        "date_plus_1",
        "date_minus_1",
        "like_altered",
    ):
        assert edit in found, edit
    assert any("LIMIT 4" in s for s in found["limit_minus_1"])
    assert any("'2009-12-31'" in s for s in found["date_minus_1"])
    assert any("LEFT JOIN" in s for s in found["join_side"])
    assert any("MAX(co.condition_start_date)" in s for s in found["aggregate_swap"])
    assert any("NOT co.condition_type_concept_id IN" in s for s in found["in_not_in"])
    assert any("co.condition_end_date" in s for s in found["column_swap"])
    dropped = found["drop_conjunct"]
    assert any("vocabulary_id" not in s for s in dropped)


def test_neighbours_are_distinct_readable_and_never_the_gold() -> None:
    sql = "SELECT COUNT(*) AS n FROM cdm.person WHERE year_of_birth >= 1950"
    found = neighbours(sql)
    texts = [n.sql for n in found]
    assert len(texts) == len(set(texts))
    gold = sqlglot.parse_one(sql, read="duckdb").sql("duckdb")
    assert gold not in texts
    for text in texts:
        sqlglot.parse_one(text, read="duckdb")
    assert "SELECT COUNT(*) AS n FROM cdm.person WHERE year_of_birth > 1950" in texts
    assert "SELECT COUNT(*) AS n FROM cdm.person WHERE year_of_birth >= 1951" in texts


def test_no_edit_that_cannot_change_a_result() -> None:
    # DISTINCT on one row of aggregates; the direction of a final ORDER BY without LIMIT
    # when order does not matter; a concept id off by one
    sql = "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8507 ORDER BY 1"
    edits = {n.edit for n in neighbours(sql)}
    assert "distinct" not in edits and "order_flip" not in edits
    assert "int_plus_1" not in edits
    ordered = {n.edit for n in neighbours(sql, order_matters=True)}
    assert "order_flip" in ordered


def test_unreadable_sql_has_no_neighbours() -> None:
    assert neighbours("SELEC nonsense FROM") == []
