"""Pages not in SQL Server SQL are read in their dialect or dropped by name, never as T-SQL."""

from __future__ import annotations

import pytest

from curate.pipeline import curate_record, curation_context
from curate.sources.dialect import detect_dialect
from curate.sources.querylibrary import parse_page
from curate.sources.records import SourceProblem, SourceRecord


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


def test_an_oracle_page_is_a_named_problem_not_a_tsql_record():
    found = parse_page(
        page("SELECT AVG(year_of_birth) FROM @cdm.person WHERE SYSDATE > x"), name="person/X01.md"
    )
    assert isinstance(found, SourceProblem)
    assert found.reason == "not_sql_server" and found.task_id == "querylibrary/X01"
    assert "Oracle (SYSDATE)" in found.message


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
