"""Scripts to one query: each rewrite is executed on DuckDB and its rows compared.

The expected rows are what the original script returns on SQL Server for the tiny
``cdm`` tables below (worked out by hand), so a rewrite passes by meaning, not text.
"""

from __future__ import annotations

import duckdb
import pytest
import sqlglot
from sqlglot import exp

from curate.ohdsi import statements as sq
from curate.ohdsi.script import to_single_query
from curate.ohdsi.statements import SingleQueryError, split_statements

SETUP = """
CREATE SCHEMA cdm;
CREATE TABLE cdm.person (person_id INTEGER, year_of_birth INTEGER, gender_concept_id INTEGER);
INSERT INTO cdm.person VALUES (1, 1940, 8507), (2, 1945, 8532), (3, 1960, 8532), (4, 1990, 8507);
CREATE TABLE cdm.concept (concept_id INTEGER, concept_name VARCHAR);
INSERT INTO cdm.concept VALUES (8507, 'MALE'), (8532, 'FEMALE'), (1, 'other');
"""


@pytest.fixture(scope="module")
def db() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(SETUP)
    yield con
    con.close()


def run(db: duckdb.DuckDBPyConnection, tsql: str) -> list[tuple]:
    (duck,) = sqlglot.transpile(tsql, read="tsql", write="duckdb")
    return sorted(db.execute(duck).fetchall(), key=repr)


EXECUTED = {
    "select_into": (
        """SELECT person_id INTO #old FROM cdm.person WHERE year_of_birth < 1950;
        SELECT COUNT(*) AS n FROM #old;
        DROP TABLE #old;""",
        [(2,)],
    ),
    "create_insert_guarded_drop": (
        """IF OBJECT_ID('tempdb..#g', 'U') IS NOT NULL DROP TABLE #g;
        CREATE TABLE #g (concept_id INT NOT NULL, name VARCHAR(255));
        INSERT INTO #g SELECT concept_id, concept_name FROM cdm.concept WHERE concept_id > 8000;
        SELECT g.name, COUNT(*) AS n FROM cdm.person p JOIN #g g
          ON p.gender_concept_id = g.concept_id GROUP BY g.name;
        TRUNCATE TABLE #g;
        DROP TABLE #g;""",
        [("FEMALE", 2), ("MALE", 2)],
    ),
    "insert_values_in_another_column_order_and_a_second_insert": (
        """CREATE TABLE #v (a INT, b VARCHAR(10));
        INSERT INTO #v (b, a) VALUES ('x', 1), ('y', 2);
        INSERT INTO #v (a) SELECT person_id FROM cdm.person WHERE person_id = 4;
        SELECT a, b FROM #v;""",
        [(1, "x"), (2, "y"), (4, None)],
    ),
    "declared_types_are_applied": (
        """CREATE TABLE #t (n INT);
        INSERT INTO #t SELECT '5';
        SELECT n + 1 AS m FROM #t;""",
        [(6,)],
    ),
    "chained_temps_and_an_unused_one": (
        """SELECT person_id, year_of_birth INTO #a FROM cdm.person;
        SELECT person_id INTO #b FROM #a WHERE year_of_birth > 1950;
        SELECT * INTO #unused FROM cdm.concept;
        SELECT COUNT(*) AS n FROM #b;""",
        [(2,)],
    ),
    "with_clauses_are_lifted": (
        """WITH q AS (SELECT person_id FROM cdm.person WHERE gender_concept_id = 8507)
        SELECT person_id INTO #m FROM q ORDER BY person_id;
        WITH r AS (SELECT 10 AS k) SELECT #m.person_id + r.k AS v FROM #m, r;""",
        [(11,), (14,)],
    ),
    "a_temp_named_like_a_table": (
        """SELECT person_id INTO #person FROM cdm.person WHERE person_id < 3;
        SELECT COUNT(*) AS n FROM #person;""",
        [(2,)],
    ),
    "declared_but_never_filled": (
        "CREATE TABLE #e (a INT); SELECT COUNT(*) AS n FROM #e;",
        [(0,)],
    ),
    "variables_with_constant_values": (
        """DECLARE @y INT = 1950;
        DECLARE @g INT;
        SET @g = 8532;
        SELECT person_id FROM cdm.person WHERE year_of_birth > @y AND gender_concept_id = @g;""",
        [(3,)],
    ),
    "no_ops_and_go": (
        "USE omop;\nSET NOCOUNT ON;\nBEGIN TRANSACTION;\nSELECT COUNT(*) AS n FROM cdm.person\n"
        "GO\nCOMMIT;",
        [(4,)],
    ),
    "global_temp_and_union_into": (
        """SELECT person_id INTO ##u FROM cdm.person WHERE person_id = 1
        UNION SELECT person_id FROM cdm.person WHERE person_id = 2;
        SELECT SUM(person_id) AS s FROM ##u;""",
        [(3,)],
    ),
    # OHDSI (Achilles) scripts end by writing their result to a table nothing reads
    "the_last_select_into_is_the_result": (
        """SELECT person_id INTO #old FROM cdm.person WHERE year_of_birth < 1950;
        SELECT 1 AS one INTO #first FROM cdm.person;
        SELECT COUNT(*) AS n INTO #s_tmpach_1 FROM #old ORDER BY 1;
        TRUNCATE TABLE #old;
        DROP TABLE #old;""",
        [(2,)],
    ),
    "the_last_insert_is_the_result": (
        """CREATE TABLE #r (n INT, g VARCHAR(10));
        INSERT INTO #r (n) SELECT COUNT(*) FROM cdm.person;
        INSERT INTO #r SELECT 1, 'x';""",
        [(1, "x"), (4, None)],
    ),
    "select_into_a_scratch_table_at_the_end_is_the_result": (
        """SELECT person_id INTO #old FROM cdm.person WHERE year_of_birth < 1950;
        SELECT COUNT(*) AS n INTO scratch.s_tmpach_1 FROM #old;
        DROP TABLE #old;""",
        [(2,)],
    ),
    "create_table_as": (
        "CREATE TABLE #c AS SELECT 7 AS k; SELECT k FROM #c;",
        [(7,)],
    ),
}


@pytest.mark.parametrize("case", sorted(EXECUTED))
def test_rewrites_return_what_the_script_returns(db, case: str) -> None:
    script, rows = EXECUTED[case]
    result = to_single_query(script)
    parsed = sqlglot.parse(result.sql, read="tsql")
    assert len(parsed) == 1 and isinstance(parsed[0], exp.Query)
    assert "#" not in result.sql
    assert run(db, result.sql) == rows


def test_notes_say_what_was_done() -> None:
    notes = to_single_query(EXECUTED["create_insert_guarded_drop"][0]).notes
    assert "#g became CTE g" in notes
    assert "DROP TABLE #g before it exists left out" in notes
    notes = to_single_query(EXECUTED["chained_temps_and_an_unused_one"][0]).notes
    assert "#unused is not used by the final query: left out" in notes


def test_a_script_ending_in_select_into_says_so() -> None:
    result = to_single_query(EXECUTED["the_last_select_into_is_the_result"][0], pretty=False)
    assert "ORDER BY" not in result.sql  # a table has no order
    assert (
        "the script ends by filling #s_tmpach_1, which nothing reads: its rows are the "
        "result" in result.notes
    )
    assert "#first is not used by the final query: left out" in result.notes


def test_a_temp_name_clashing_with_a_table_gets_a_suffix() -> None:
    out = to_single_query(EXECUTED["a_temp_named_like_a_table"][0], pretty=False).sql
    assert out.startswith("WITH person AS")  # no unqualified person table: no clash
    clash = to_single_query(
        "SELECT 1 AS a INTO #person; SELECT * FROM #person, person", pretty=False
    ).sql
    assert clash.startswith("WITH person_tmp AS") and "FROM person_tmp, person" in clash


def test_a_plain_query_is_returned_as_one_query() -> None:
    result = to_single_query("SELECT TOP 3 person_id FROM cdm.person ORDER BY person_id;")
    assert result.notes == ()
    assert (
        result.sql
        == sqlglot.transpile(
            "SELECT TOP 3 person_id FROM cdm.person ORDER BY person_id",
            read="tsql",
            write="tsql",
            pretty=True,
        )[0]
    )


DROPPED = {
    "SELECT 1; SELECT 2": sq.SEVERAL_QUERIES,
    "SELECT 1 AS a INTO #t; DROP TABLE #t": sq.NO_QUERY,
    "SELECT 1 AS a INTO scratch.t; SELECT * FROM scratch.t": sq.WRITES_DATABASE,
    "DROP TABLE #t;": sq.NO_QUERY,
    "SELECT a FROM #t; SELECT 1 AS a INTO #t": sq.TEMP_UNDEFINED,
    "SELECT 1 AS a INTO #t; DROP TABLE #t; SELECT a FROM #t": sq.TEMP_UNDEFINED,
    "INSERT INTO #t SELECT 1; SELECT * FROM #t": sq.TEMP_UNDEFINED,
    "SELECT 1 AS a INTO #t; DROP TABLE #t; "
    "SELECT 2 AS a INTO #t; SELECT a FROM #t": sq.TEMP_REDEFINED,
    "CREATE TABLE #t (a INT); CREATE TABLE #t (b INT); SELECT 1": sq.TEMP_REDEFINED,
    "SELECT 1 AS a INTO #t; UPDATE #t SET a = 2; SELECT a FROM #t": sq.TEMP_MODIFIED,
    "SELECT 1 AS a INTO #t; DELETE FROM #t WHERE a = 1; SELECT a FROM #t": sq.TEMP_MODIFIED,
    "SELECT 1 AS a INTO #t; TRUNCATE TABLE #t; SELECT a FROM #t": sq.TEMP_MODIFIED,
    "SELECT 1 AS a INTO #t; INSERT INTO #t SELECT 2; SELECT a FROM #t": sq.TEMP_MODIFIED,
    "CREATE TABLE #t (a INT); INSERT INTO #t SELECT 1; SELECT a FROM #t; "
    "INSERT INTO #t SELECT 2; SELECT a FROM #t": sq.TEMP_MODIFIED,
    "CREATE TABLE #t (a INT); "
    "INSERT INTO #t SELECT a + 1 FROM #t; SELECT a FROM #t": sq.TEMP_SELF_REFERENCE,
    "CREATE TABLE #t (id INT IDENTITY(1,1), a INT); INSERT INTO #t (a) SELECT 1; "
    "SELECT * FROM #t": sq.TEMP_COLUMNS,
    "CREATE TABLE #t (a INT DEFAULT 3, b INT); "
    "INSERT INTO #t (b) SELECT 1; SELECT * FROM #t": sq.TEMP_COLUMNS,
    "CREATE TABLE #t (a INT); INSERT INTO #t SELECT 1, 2; SELECT * FROM #t": sq.TEMP_COLUMNS,
    "CREATE TABLE #t (a INT); INSERT INTO #t (b) SELECT 1; SELECT * FROM #t": sq.TEMP_COLUMNS,
    "INSERT INTO cdm.person SELECT * FROM cdm.person; SELECT 1": sq.WRITES_DATABASE,
    "SELECT * INTO cdm.copy FROM cdm.person; SELECT 1": sq.WRITES_DATABASE,
    "CREATE TABLE results.x (a INT); SELECT 1": sq.WRITES_DATABASE,
    "DROP TABLE cdm.person; SELECT 1": sq.WRITES_DATABASE,
    "UPDATE cdm.person SET year_of_birth = 1; SELECT 1": sq.WRITES_DATABASE,
    "WHILE 1 = 1 BEGIN SELECT 1; END; SELECT 2": sq.CONTROL_FLOW,
    "IF 1 = 1 SELECT 1": sq.CONTROL_FLOW,
    "BEGIN SELECT 1; END": sq.CONTROL_FLOW,
    "DECLARE @x INT; SELECT @x": sq.VARIABLE,
    "DECLARE @x INT = (SELECT COUNT(*) FROM cdm.person); SELECT @x": sq.VARIABLE,
    "DECLARE @x INT = 1; SELECT @x; SET @x = 2; SELECT @x": sq.VARIABLE,
    "DECLARE @n INT; SELECT @n = COUNT(*) FROM cdm.person": sq.VARIABLE,
    "DECLARE @n INT = 0; SELECT @n = COUNT(*) FROM cdm.person; SELECT @n": sq.VARIABLE,
    "/* c */ BEGIN SELECT 1; END": sq.CONTROL_FLOW,
    "SELECT @undeclared": sq.VARIABLE,
    "SELECT 1 AS a; SELECT @@ROWCOUNT": sq.VARIABLE,
    "EXEC sp_who; SELECT 1": sq.UNSUPPORTED,
    "SET ROWCOUNT 10; SELECT 1": sq.UNSUPPORTED,
    "SET ANSI_NULLS OFF; SELECT 1": sq.UNSUPPORTED,
    "WITH q AS (SELECT 1 AS a) SELECT a INTO #t FROM q; WITH q AS (SELECT 2 AS b) "
    "SELECT * FROM #t, q": sq.NAME_CONFLICT,
    "SELECT FROM WHERE": sq.PARSE_ERROR,
}


@pytest.mark.parametrize("script", list(DROPPED))
def test_unsound_scripts_are_dropped_with_a_named_reason(script: str) -> None:
    with pytest.raises(SingleQueryError) as err:
        to_single_query(script)
    assert err.value.reason == DROPPED[script]
    assert err.value.reason in sq.REASONS
    assert err.value.stage == "ohdsi" and err.value.message


def test_a_parse_error_names_the_line_of_the_script() -> None:
    """The script is tokenized once: a statement's line is counted from the script's top."""
    with pytest.raises(SingleQueryError) as err:
        to_single_query("SELECT 1 AS a;\n\nSELECT a,\n  FROM (;")
    assert err.value.reason == sq.PARSE_ERROR
    assert "'SELECT a, FROM (' (line 4)" in err.value.message


def test_statements_split_at_semicolons_and_go_lines_only() -> None:
    script = "SELECT 'a;b' AS x -- ; not here\n;\nSELECT 2 AS go_on\nGO\n/* GO */ SELECT 3"
    assert split_statements(script) == [
        "SELECT 'a;b' AS x -- ; not here",
        "SELECT 2 AS go_on",
        "/* GO */ SELECT 3",
    ]
