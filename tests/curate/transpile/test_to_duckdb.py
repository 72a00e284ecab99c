"""Transpile cases from tests/curate/transpile/cases.json, executed on a small CDM database.

Each case's SQL Server (or PostgreSQL, DuckDB) query is transpiled and run on an
in-memory DuckDB holding every CDM table (schema ``cdm``) and the rows of
``data.sql`` beside it; its rows must equal the rows SQL Server would return
(written in the case, or computed by a hand-written DuckDB query).  ``naive: differs``
cases also run sqlglot's plain tsql -> duckdb output and show that it fails or returns
something else, so the rule is needed; ``naive: same`` cases show sqlglot alone is right.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path

import duckdb
import pytest
import sqlglot

from curate.transpile.to_duckdb import RULES, TranspileError, transpile
from score.cdm.schema import CDM_TABLES, create_table_sql

FIXTURES = Path(__file__).parent
CASES = json.loads((FIXTURES / "cases.json").read_text())
RUN_CASES = [c for c in CASES if "error" not in c and "fails" not in c]
ERROR_CASES = [c for c in CASES if "error" in c]
FAILING_CASES = [c for c in CASES if "fails" in c]


@pytest.fixture(scope="module")
def cdm() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with every CDM table in schema cdm and a handful of rows."""
    con = duckdb.connect()
    con.execute("CREATE SCHEMA cdm")
    for table in CDM_TABLES:
        con.execute(create_table_sql(table, "cdm"))
    con.execute((FIXTURES / "data.sql").read_text())
    return con


@pytest.fixture(scope="module")
def naive_cdm(cdm: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """The same database where unqualified names find the cdm tables (for sqlglot's output)."""
    cursor = cdm.cursor()
    cursor.execute("SET search_path = 'cdm'")
    return cursor


def _value(value):
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal | float):
        return round(float(value), 9)
    return value


def _rows(rows, ordered: bool) -> list:
    normal = [tuple(_value(v) for v in row) for row in rows]
    return normal if ordered else sorted(normal, key=repr)


def _run(con: duckdb.DuckDBPyConnection, sql: str, case: dict) -> list:
    probe = case.get("probe")
    query = probe.format(sql=sql) if probe else sql
    return _rows(con.execute(query).fetchall(), case.get("ordered", False))


def _expected(con: duckdb.DuckDBPyConnection, case: dict) -> list:
    if "expected_sql" in case:
        return _rows(con.execute(case["expected_sql"]).fetchall(), case.get("ordered", False))
    return _rows(case["expected"], case.get("ordered", False))


def _source(case: dict) -> tuple[str, str]:
    return case.get("tsql", case.get("sql")), case.get("read", "tsql")


@pytest.mark.parametrize("case", RUN_CASES, ids=[c["id"] for c in RUN_CASES])
def test_transpiled_query_returns_sql_server_result(case: dict, cdm) -> None:
    sql, read = _source(case)
    result = transpile(sql, read=read)
    assert _run(cdm, result.sql, case) == _expected(cdm, case), result.sql
    assert set(case["rules"]) <= set(result.rules), result.rules


@pytest.mark.parametrize(
    "case", [c for c in RUN_CASES if "naive" in c], ids=[c["id"] for c in RUN_CASES if "naive" in c]
)
def test_naive_sqlglot_shows_whether_the_rule_matters(case: dict, cdm, naive_cdm) -> None:
    sql, read = _source(case)
    naive = sqlglot.transpile(sql, read=read, write="duckdb")[0]
    try:
        rows = _run(naive_cdm, naive, case)
    except duckdb.Error:
        rows = None
    if case["naive"] == "differs":
        assert rows != _expected(cdm, case), f"sqlglot alone is already right: {naive}"
    else:
        assert rows == _expected(cdm, case), naive


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c["id"] for c in ERROR_CASES])
def test_unfaithful_queries_are_refused_with_a_reason(case: dict) -> None:
    sql, read = _source(case)
    with pytest.raises(TranspileError) as raised:
        transpile(sql, read=read)
    assert case["error"] in str(raised.value)
    assert raised.value.stage == "transpile"
    assert raised.value.rule
    if "rule" in case:
        assert raised.value.rule == case["rule"]


@pytest.mark.parametrize("case", FAILING_CASES, ids=[c["id"] for c in FAILING_CASES])
def test_queries_sql_server_fails_on_fail_on_duckdb_too(case: dict, cdm) -> None:
    sql, read = _source(case)
    result = transpile(sql, read=read)
    with pytest.raises(duckdb.Error, match=case["fails"]):
        cdm.execute(result.sql).fetchall()
    assert set(case["rules"]) <= set(result.rules), result.rules
    naive = sqlglot.transpile(sql, read=read, write="duckdb")[0]
    cdm.cursor().execute("SET search_path = 'cdm'").execute(naive).fetchall()  # DuckDB alone runs


def test_every_rule_is_shown_by_an_executed_case() -> None:
    shown = {name for case in RUN_CASES + FAILING_CASES for name in case.get("rules", [])}
    refusing = {"text_of_number_or_time"} | {c["rule"] for c in ERROR_CASES if "rule" in c}
    missing = {r.name for r in RULES} - shown - refusing - {"redundant_text_casts"}
    assert not missing


def test_redundant_text_casts_keep_the_sql_readable() -> None:
    result = transpile("SELECT LEFT(concept_name, 2), LEN(concept_name) FROM concept")
    assert "CAST" not in result.sql
    assert "redundant_text_casts" in result.rules
