"""A gold made one query is transpiled from the tree its script was read into, by the
transpiler's own SQL Server reader: never written out as SQL Server text and parsed again.

What a SQL Server gold means is then what its own text means: the reading equals the
transpile of the text (what ``sqlgold verify --gold`` runs), and a script made one query
returns the rows the written-out text would have returned."""

from __future__ import annotations

import pytest

from curate.ohdsi.render import render_record, render_record_gold_tree
from curate.reading.gold import read_gold, to_duckdb
from curate.sources.load import load_sources
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import READS, Transpiled, transpile
from curate.verify.gold import Drop
from tests.paths import PROJECT_SOURCE

#: Scripts whose written-out SQL Server text differs from their tree: sqlglot writes
#: DATEDIFF's dates as CAST(... AS DATETIME2) and names every derived column.
SCRIPTS = {
    "temp_table_and_datediff": """
        SELECT person_id, MIN(observation_period_start_date) AS first_start,
               MAX(observation_period_end_date) AS last_end
        INTO #spans FROM cdm.observation_period GROUP BY person_id;
        SELECT TOP 5 person_id, DATEDIFF(day, first_start, last_end) AS days
        FROM #spans ORDER BY days DESC, person_id;
    """,
    "ohdsi_parameters": """
        {DEFAULT @min_year = 1950}
        SELECT gender_concept_id, COUNT(*) AS n INTO #born
        FROM @cdm_database_schema.person WHERE year_of_birth >= @min_year
        GROUP BY gender_concept_id;
        SELECT gender_concept_id, n,
               DATEDIFF(year, DATEFROMPARTS(@min_year, 1, 1), '2020-01-01') AS span
        FROM #born ORDER BY gender_concept_id;
    """,
}


def _record(name: str, sql: str) -> SourceRecord:
    dialect = "ohdsi" if "@" in sql else "tsql"
    return SourceRecord(id=name, question="q", gold_sql=sql, gold_dialect=dialect)


def test_a_sql_server_gold_reads_as_its_own_text_transpiles():
    records = [
        r
        for r in load_sources(PROJECT_SOURCE, "jsonl")[0]
        if r.answerable and r.gold_dialect == "tsql"
    ]
    assert len(records) > 100
    for record in records:
        _, _, gold = read_gold(record)
        assert gold == transpile(record.gold_sql, read="tsql"), record.id


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_script_read_from_its_tree_returns_what_its_text_returns(name, executor):
    record = _record(name, SCRIPTS[name])
    notes, rendered, gold = read_gold(record)
    assert isinstance(gold, Transpiled), gold
    assert rendered is not None and "#" in rendered.gold_sql  # the script, as rendered
    assert any("became CTE" in n for n in notes)

    written = render_record(record)[0]  # the one query written out as SQL Server text
    through_text = to_duckdb(written.gold_sql, written.gold_dialect, "gold_sql")
    assert isinstance(through_text, Transpiled)
    # the text route's DATEDIFF reads dates cast to DATETIME2; the tree's, the dates
    assert gold.sql.count("AS TIMESTAMP") < through_text.sql.count("AS TIMESTAMP")
    ran = executor.execute(gold.sql)
    assert ran.num_rows > 0
    assert ran.rows() == executor.execute(through_text.sql).rows()


def test_the_tree_is_read_by_the_reader_given():
    script = "SELECT 1 AS a INTO #t; SELECT DATEPART(dw, '2020-01-05') AS d FROM #t"
    record = _record("s", script)
    _, _, tree = render_record_gold_tree(record, READS["tsql"])
    assert tree is not None
    # the transpiler's reader builds DATEPART as SQL Server means it (its rule is named),
    # exactly as it reads the one query's text
    one_query = "WITH t AS (SELECT 1 AS a) SELECT DATEPART(dw, '2020-01-05') AS d FROM t"
    assert transpile("", read="tsql", tree=tree) == transpile(one_query)
    _, _, plain = render_record_gold_tree(record, "tsql")
    assert "tsql_date_parts" not in transpile("", read="tsql", tree=plain).rules
    duck = SourceRecord(id="d", question="q", gold_sql="SELECT 1", gold_dialect="duckdb")
    assert render_record_gold_tree(duck, READS["tsql"])[2] is None


def test_a_script_the_reader_cannot_build_is_a_render_drop():
    record = _record("bad", "SELECT 1 AS a INTO #t; SELECT DATEADD(day) AS x FROM #t")
    _, _, gold = read_gold(record)
    assert isinstance(gold, Drop)
    assert (gold.stage, gold.rule) == ("ohdsi", "sql_parse_error")
