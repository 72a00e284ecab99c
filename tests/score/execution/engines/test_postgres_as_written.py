"""On PostgreSQL a prediction runs as written: the server's own verdict on its text, the
server's session settings, and the values its driver returns.

What the engine may change in a text is a fixed today's literals in place of the clock
readers among its tokens; everything else reaches the server byte for byte, so SQL the
server refuses fails with the server's own error, with and without ``--today``.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import psycopg
import pytest

from score.comparison.compare import compare
from score.execution.engines.base import Limits
from score.execution.engines.postgres_results import classify
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError, QueryResult
from score.scoring.gold_cache import GoldCache

TODAY = dt.date(2026, 1, 15)

#: SQL of other dialects that models write for PostgreSQL and PostgreSQL refuses, each
#: reading the clock (TEXT-TO-OMOP's published result files hold every one of them).
REFUSED = {
    "mysql_date_sub": "SELECT count(*) AS n FROM measurement "
    "WHERE measurement_date > DATE_SUB(CURRENT_DATE, INTERVAL '1 year')",
    "mysql_datediff": "SELECT count(*) AS n FROM death "
    "WHERE DATEDIFF(death_date, CURRENT_DATE) > 0",
    "mysql_year": "SELECT count(*) AS n FROM person WHERE YEAR(CURRENT_DATE) - year_of_birth > 50",
    "current_date_called": "SELECT count(*) AS n FROM person "
    "WHERE year_of_birth < EXTRACT(YEAR FROM current_date())",
    "timestampdiff_hour": "SELECT TIMESTAMPDIFF(HOUR, visit_start_datetime, CURRENT_TIMESTAMP) "
    "AS hours_ago FROM visit_occurrence",
    "sql_server_getdate": "SELECT count(*) AS n FROM person WHERE birth_datetime < GETDATE()",
    "current_timestamp_called": "SELECT count(*) AS n FROM visit_occurrence "
    "WHERE visit_start_datetime < current_timestamp()",
}


@pytest.fixture(scope="module")
def executors(pg_cdm):
    """The live clock and a fixed today, on the same server."""
    live = Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=10))
    fixed = Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=10, today=TODAY))
    try:
        yield {"live": live, "fixed": fixed}
    finally:
        live.close()
        fixed.close()


@pytest.fixture(scope="module")
def plain(pg_cdm):
    """A plain psycopg session of the reader, as a peer's evaluator opens one."""
    with psycopg.connect(pg_cdm.reader_url, autocommit=True) as conn:
        conn.execute("SET search_path TO cdm, public")
        yield conn


def _server_error(conn, sql: str) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as raised:
        conn.execute(sql)
    return raised.value


@pytest.mark.parametrize("name", sorted(REFUSED))
@pytest.mark.parametrize("clock", ["live", "fixed"])
def test_sql_the_server_refuses_fails_with_the_server_s_own_error(executors, plain, name, clock):
    sql = REFUSED[name]
    server = _server_error(plain, sql)
    outcome = executors[clock].try_execute(sql)
    assert isinstance(outcome, QueryError), (name, clock, outcome)
    assert outcome == classify(server, Limits(None, 10, 2**20, 10.0)), (name, clock)
    assert type(server).__name__ in {"UndefinedFunction", "SyntaxError", "UndefinedColumn"}


def test_a_fixed_today_replaces_the_clock_readers_and_nothing_else(executors):
    sql = (
        "SELECT count(*) AS n, 'current_date' AS label -- now()\n"
        "FROM person WHERE birth_datetime < now() - INTERVAL '1 year' AND 1 = 1"
    )
    prepared = executors["fixed"].prepare(sql)
    assert prepared.sql == sql.replace(
        "now()", "CAST('2026-01-15 00:00:00' AS TIMESTAMPTZ)", 2
    ).replace("-- CAST('2026-01-15 00:00:00' AS TIMESTAMPTZ)", "-- now()")
    assert "'current_date' AS label -- now()" in prepared.sql
    assert executors["live"].prepare(sql).sql == sql  # no fixed today: untouched


@pytest.mark.parametrize(
    ("reader", "value"),
    [
        ("CURRENT_DATE", dt.date(2026, 1, 15)),
        ("LOCALTIMESTAMP(2)", dt.datetime(2026, 1, 15)),
        ("'yesterday'::date", dt.date(2026, 1, 14)),
        ("DATE 'tomorrow'", dt.date(2026, 1, 16)),
        ("CAST('today' AS date)", dt.date(2026, 1, 15)),
        ("pg_catalog.now()::date", dt.date(2026, 1, 15)),
        ('"now"()::date', dt.date(2026, 1, 15)),
        ("statement_timestamp()::date", dt.date(2026, 1, 15)),
        ("clock_timestamp()::date", dt.date(2026, 1, 15)),
    ],
)
def test_every_clock_reader_postgresql_accepts_reads_the_fixed_day(executors, reader, value):
    result = executors["fixed"].execute(f"SELECT {reader} AS v")
    assert result.rows() == [(value,)]


def test_every_clock_function_of_postgresql_s_catalog_is_pinned(plain):
    """A function the server has that reads the clock and the pin does not know would run
    unpinned under a fixed today: the catalog's list is checked against the pin's."""
    from score.execution.fixed_today import ENGINE_CLOCKS

    rows = plain.execute(
        "SELECT proname FROM pg_proc WHERE pronargs = 0 AND provolatile IN ('s', 'v') AND "
        "prorettype IN ('date'::regtype, 'timestamptz'::regtype, 'timestamp'::regtype, "
        "'time'::regtype, 'timetz'::regtype) AND proname NOT LIKE 'pg\\_%'"
    ).fetchall()
    known = {name.lower() for name in ENGINE_CLOCKS["postgres"].functions}
    assert {r[0] for r in rows} <= known


def test_date_and_interval_styles_are_the_server_s(executors, plain):
    """'11/03/2203' is 3 November under the server's default DateStyle (ISO, MDY), and
    intervals load under its default IntervalStyle."""
    ex = executors["live"]
    got = ex.execute("SELECT '11/03/2203 14:17:29'::timestamp AS t").rows()
    assert got == plain.execute("SELECT '11/03/2203 14:17:29'::timestamp").fetchall()
    assert got == [(dt.datetime(2203, 11, 3, 14, 17, 29),)]
    interval = ex.execute("SELECT INTERVAL '1 year 2 days 03:04:05' AS i").rows()
    assert interval == [(dt.timedelta(days=367, seconds=11045),)]
    (style,) = plain.execute("SHOW DateStyle").fetchone()
    assert ex.session_settings == {
        "TimeZone": "UTC",
        "DateStyle": style,
        "IntervalStyle": plain.execute("SHOW IntervalStyle").fetchone()[0],
        "standard_conforming_strings": "on",
    }


def test_numeric_values_are_the_driver_s_decimals(executors, tmp_path):
    ex = executors["live"]
    result = ex.execute("SELECT 1.10::numeric AS n, 2.5::float8 AS f")
    assert result.rows() == [(1.1, 2.5)]  # the table: NUMERIC as float, as DuckDB's DOUBLE
    assert repr(result.driver_values(0)) == "[Decimal('1.10')]"
    assert result.driver_values(1) is None
    # TEXT-TO-OMOP compares what psycopg2 gives: Decimal('0.1') is not the float 0.1,
    # Decimal('0.5') is 0.5
    decimal_tenth = ex.execute("SELECT 0.1::numeric AS x")
    float_tenth = ex.execute("SELECT 0.1::float8 AS x")
    assert compare(decimal_tenth, float_tenth, "text2omop").match is False
    assert compare(decimal_tenth, float_tenth, "sqlgold").match is True
    half = (ex.execute("SELECT 0.5::numeric AS x"), ex.execute("SELECT 0.5::float8 AS x"))
    assert compare(*half, "text2omop").match is True
    # the gold cache (golds are DuckDB SQL) keeps them exactly
    gold = "SELECT CAST(1.10 AS DECIMAL(5, 2)) AS n, CAST(2 AS DECIMAL(3, 0)) AS m"
    GoldCache(tmp_path, ex).result(gold)
    again = GoldCache(tmp_path, ex).result(gold)
    assert isinstance(again, QueryResult)
    assert (again.driver_values(0), again.driver_values(1)) == ([Decimal("1.10")], [Decimal("2")])
    assert repr(again.driver_values(0)[0]) == "Decimal('1.10')"


def test_duckdb_predictions_on_postgresql_say_they_were_transpiled(pg_cdm, tmp_path):
    from click.testing import CliRunner

    from curate.cli import main as cli
    from tests.task_factory import make_task, write_task_file

    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1")])
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps({"task_id": "t1", "language": "en", "sql": "SELECT count(*) FROM person"}) + "\n"
    )
    out = tmp_path / "run"
    args = ["score", "run", str(tasks), str(preds), "--out", str(out), "--split", "all"]
    done = CliRunner().invoke(
        cli, [*args, "--db", pg_cdm.reader_url, "--dialect", "duckdb", "-q", "--no-cache"]
    )
    assert done.exit_code == 0, done.output
    (line,) = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    assert line["transpiled_from"] == "duckdb" and line["outcome"] == "correct"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["predictions_transpiled"] == {"from": "duckdb", "to": "postgres", "instances": 1}
    assert summary["meta"]["session"]["TimeZone"] == "UTC"
    assert CliRunner().invoke(cli, ["score", "report", str(out)]).exit_code == 0
    assert "transpiled by sqlglot to postgres" in (out / "report.md").read_text()
