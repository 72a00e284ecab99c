"""A fixed today is pinned among a text's tokens: the clock readers an engine accepts
become literals of the fixed day, and nothing else of the text changes."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from score.execution.fixed_today import ENGINE_CLOCKS, pin_today_in_text

DAY = dt.date(2026, 1, 15)
DATE = "CAST('2026-01-15' AS DATE)"
STAMP = "CAST('2026-01-15 00:00:00' AS TIMESTAMP)"
STAMPTZ = "CAST('2026-01-15 00:00:00' AS TIMESTAMPTZ)"


@pytest.mark.parametrize(
    ("dialect", "sql", "pinned"),
    [
        # strings, quoted names and comments are never read
        ("duckdb", "SELECT 'now()', \"current_date\" FROM t -- today()", None),
        ("postgres", "SELECT 'current_date' /* now() */", None),
        # an alias or a column of another table named like a reader
        ("postgres", "SELECT 1 AS current_date, t.now FROM t", None),
        ("duckdb", "SELECT x.now() FROM t", None),
        # spellings the engine refuses stay as written, for its own error
        ("postgres", "SELECT current_date(), getdate(), sysdate", None),
        ("duckdb", "SELECT current_timestamp(), getdate()", None),
        # the readers each engine accepts
        ("duckdb", "SELECT current_date()", f"SELECT {DATE}"),
        ("duckdb", "SELECT system.main.now(), today()", f"SELECT {STAMP}, {DATE}"),
        ("postgres", "SELECT CURRENT_TIMESTAMP(3)", f"SELECT {STAMPTZ}"),
        ("postgres", "SELECT x FROM t WHERE d<now()-1", f"SELECT x FROM t WHERE d<{STAMPTZ}-1"),
        ("postgres", "SELECT 'today'::date, 'today'", "SELECT '2026-01-15'::date, 'today'"),
        # whitespace, case and line breaks around a reader are kept
        ("duckdb", "select\n\tCurrent_Date\n-- x", f"select\n\t{DATE}\n-- x"),
    ],
)
def test_only_the_clock_readers_change(dialect, sql, pinned):
    expected = (sql, False) if pinned is None else (pinned, True)
    assert pin_today_in_text(sql, dialect, DAY) == expected


def test_an_untokenizable_text_is_left_for_the_engine_to_refuse():
    assert pin_today_in_text("SELECT 'now() ", "duckdb", DAY) == ("SELECT 'now() ", False)


def test_every_clock_function_of_duckdb_s_catalog_is_pinned():
    """A function DuckDB has that reads the clock and the pin does not know would run
    unpinned under a fixed today: DuckDB's catalog is checked against the pin's list."""
    con = duckdb.connect()
    rows = con.execute(
        "SELECT DISTINCT function_name FROM duckdb_functions() WHERE function_type = 'scalar' "
        "AND (parameters = [] OR parameters IS NULL) AND stability = 'CONSISTENT_WITHIN_QUERY' "
        "AND return_type IN ('DATE', 'TIMESTAMP', 'TIMESTAMP WITH TIME ZONE', 'TIME', "
        "'TIME WITH TIME ZONE')"
    ).fetchall()
    clocks = ENGINE_CLOCKS["duckdb"]
    known = {name.lower() for name in [*clocks.functions, *clocks.keywords]}
    assert rows and {name for (name,) in rows} <= known


@pytest.fixture(scope="module")
def fixed(omop_db):
    from score.execution.executor import Executor, ExecutorSettings

    with Executor(omop_db, settings=ExecutorSettings(today=DAY)) as ex:
        yield ex


@pytest.mark.parametrize(
    "reader",
    [
        "current_date",
        "current_date()",
        "today()",
        "now()",
        "main.now()",
        "system.main.get_current_timestamp()",
        "transaction_timestamp()",
        "current_localtimestamp()",
        "localtimestamp",
        "current_timestamp",
    ],
)
def test_every_clock_reader_duckdb_accepts_reads_the_fixed_day(fixed, reader):
    (value,) = fixed.execute(f"SELECT CAST({reader} AS DATE) AS d").rows()[0]
    assert value == DAY
