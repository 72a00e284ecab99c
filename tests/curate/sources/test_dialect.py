"""Pages not in SQL Server SQL are read in their own dialect (or dropped by a named rule),
never as T-SQL."""

from __future__ import annotations

import pytest

from curate.pipeline import curate_record, curation_context
from curate.sources.dialect import detect_dialect
from curate.sources.querylibrary import parse_page
from curate.sources.records import SourceRecord


def page(sql: str) -> str:
    return (
        "<!---\nGroup:person\nName:X01 Mean year of birth\n-->\n# X01: Mean year of birth\n"
        f"## Description\nThe mean year of birth by gender.\n## Query\n```sql\n{sql}\n```\n"
    )


@pytest.mark.parametrize(
    ("sql", "dialect"),
    [
        ("SELECT TOP 3 person_id FROM @cdm.person ORDER BY person_id", "ohdsi"),
        ("SELECT COUNT_BIG(*) FROM #cohort WHERE note = 'LIMIT ::'", "ohdsi"),
        ("SELECT person_id FROM @cdm.person -- NVL(x, 0), SYSDATE\nWHERE 1 = 1", "ohdsi"),
        ("SELECT year_of_birth::float / 2 FROM @cdm.person", "postgres"),
        ("SELECT * FROM @cdm.concept WHERE concept_name ILIKE '%pain%' LIMIT 5", "postgres"),
        ("SELECT DATE_PART('year', NOW()) - year_of_birth FROM @cdm.person", "postgres"),
        ("SELECT TO_CHAR(visit_start_date, 'YYYY') FROM @cdm.visit_occurrence LIMIT 3", "postgres"),
        ("SELECT NVL(x, 0) FROM t", "oracle"),
        ("SELECT * FROM @cdm.drug_era WHERE drug_era_end_date > SYSDATE", "oracle"),
        ("SELECT 1 FROM DUAL", "oracle"),
        ("SELECT a.x FROM a, b WHERE a.id = b.id(+)", "oracle"),
        ("SELECT TO_DATE('2020-01-01', 'YYYY-MM-DD') FROM t WHERE ROWNUM < 5", "oracle"),
        ("SELECT TOP 5 x::int FROM t", "mixed"),
        ("SELECT a || b FROM t", "mixed"),
    ],
)
def test_the_dialect_is_told_by_tokens(sql, dialect):
    assert detect_dialect(sql).dialect == dialect


def curate(record, executor, **settings):
    from dataclasses import replace

    from score.execution.executor import Executor

    if settings:
        executor = Executor(
            executor.db_path,
            executor.schema,
            replace(executor.settings, **settings),
            sql_dialect="duckdb",
        )
    try:
        with curation_context(executor) as ctx:
            return curate_record(record, ctx)
    finally:
        if settings:
            executor.close()


def test_an_oracle_page_is_read_as_oracle_not_as_tsql(executor):
    sql = (
        "SELECT p.person_id, NVL(d.death_date - TRUNC(p.birth_datetime), -1) AS days_lived, "
        "TO_CHAR(p.birth_datetime, 'YYYY-MM') AS born, p.person_source_value || '' AS src "
        "FROM @cdm.person p, @cdm.death d WHERE p.person_id = d.person_id(+) "
        "AND p.person_id <= 3"
    )
    record = parse_page(page(sql), name="person/X01.md")
    assert isinstance(record, SourceRecord) and record.gold_dialect == "oracle"
    task, verdict = curate(record, executor)
    assert verdict.status == "kept", verdict
    assert task["source_dialect"] == "oracle"
    rules = set(task["transpile_rules"])
    assert {
        "oracle_join_marks",
        "oracle_date_arithmetic",
        "oracle_to_text",
        "oracle_empty_text_is_null",
    } <= rules
    expected = executor.execute(
        "SELECT p.person_id, "
        "COALESCE(DATE_DIFF('day', DATE_TRUNC('day', p.birth_datetime), d.death_date), -1), "
        "STRFTIME(p.birth_datetime, '%Y-%m'), NULLIF(CONCAT(p.person_source_value, NULL), '') "
        "FROM cdm.person p LEFT JOIN cdm.death d ON p.person_id = d.person_id "
        "WHERE p.person_id <= 3"
    ).rows()
    assert sorted(executor.execute(task["gold_sql"]).rows()) == sorted(expected)


def test_sysdate_needs_a_fixed_today_or_is_a_named_drop(executor):
    sql = "SELECT COUNT(*) AS n FROM @cdm.person WHERE birth_datetime < SYSDATE - 365 * 30"
    record = parse_page(page(sql), name="person/X01.md")
    assert record.gold_dialect == "oracle"
    _, verdict = curate(record, executor)
    assert (verdict.status, verdict.rule) == ("dropped", "no_current_date")
    import datetime as dt

    task, verdict = curate(record, executor, today=dt.date(2020, 1, 1))
    assert verdict.status == "kept", verdict
    assert task["today"] == "2020-01-01"


@pytest.mark.parametrize(
    ("sql", "rule"),
    [
        ("SELECT person_id FROM @cdm.person WHERE ROWNUM <= 3", "oracle_rownum"),
        ("SELECT NVL(TO_CHAR(birth_datetime, 'Month'), '-') FROM @cdm.person", "oracle_to_text"),
        (
            "SELECT TRUNC(birth_datetime, 'WW') FROM @cdm.person WHERE SYSDATE > birth_datetime",
            "oracle_trunc",
        ),
    ],
)
def test_oracle_constructs_that_cannot_be_read_with_confidence_are_named_drops(executor, sql, rule):
    record = parse_page(page(sql), name="person/X01.md")
    assert record.gold_dialect == "oracle"
    _, verdict = curate(record, executor)
    assert (verdict.status, verdict.stage, verdict.rule) == ("dropped", "transpile", rule)


def test_oracle_top_n_by_rownum_is_an_ordered_limit(executor):
    sql = (
        "SELECT * FROM (SELECT person_id, year_of_birth FROM @cdm.person "
        "ORDER BY year_of_birth DESC, person_id) WHERE ROWNUM <= 3"
    )
    task, verdict = curate(parse_page(page(sql), name="person/X01.md"), executor)
    assert verdict.status == "kept", verdict
    assert task["order_matters"] and "oracle_rownum" in task["transpile_rules"]
    expected = executor.execute(
        "SELECT person_id, year_of_birth FROM cdm.person "
        "ORDER BY year_of_birth DESC NULLS FIRST, person_id LIMIT 3"
    ).rows()
    assert executor.execute(task["gold_sql"]).rows() == expected


def test_a_mixed_page_whose_readings_agree_is_kept(executor):
    sql = "SELECT EXTRACT(YEAR FROM birth_datetime) AS y, COUNT(*) AS n FROM @cdm.person GROUP BY 1"
    record = parse_page(page(sql), name="person/X01.md")
    assert record.gold_dialect == "auto"
    task, verdict = curate(record, executor)
    assert verdict.status == "kept", verdict
    assert "read_as_oracle" in task["transpile_rules"]


def test_a_mixed_page_whose_readings_differ_is_a_named_drop(executor):
    sql = "SELECT person_source_value || gender_source_value AS s FROM @cdm.person"
    record = parse_page(page(sql), name="person/X01.md")
    assert record.gold_dialect == "auto"
    _, verdict = curate(record, executor)
    assert (verdict.status, verdict.rule) == ("dropped", "ambiguous_dialect")
    assert "oracle, postgres readings differ" in verdict.reason


def test_a_postgres_page_is_read_as_postgres_with_its_placeholders_rendered(executor):
    sql = (
        "SELECT gender_concept_id, AVG(year_of_birth)::numeric(10, 2) AS mean_year "
        "FROM @cdm.person GROUP BY gender_concept_id ORDER BY gender_concept_id"
    )
    record = parse_page(page(sql), name="person/X01.md")
    assert isinstance(record, SourceRecord) and record.gold_dialect == "postgres"
    with curation_context(executor) as ctx:
        task, verdict = curate_record(record, ctx)
    assert verdict.status == "kept", verdict
    assert task["source_dialect"] == "postgres" and "avg_of_integers" not in task["transpile_rules"]
    # PostgreSQL's AVG of integers keeps its fraction; SQL Server's would truncate it
    rows = executor.execute(task["gold_sql"]).rows()
    expected = executor.execute(
        "SELECT gender_concept_id, ROUND(AVG(year_of_birth), 2) FROM cdm.person "
        "GROUP BY 1 ORDER BY 1"
    ).rows()
    assert [(g, float(m)) for g, m in rows] == [(g, float(m)) for g, m in expected]
    assert any(float(m) != int(float(m)) for _, m in rows)
