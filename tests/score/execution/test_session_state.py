"""What a statement past both parsers could leave behind does not reach the next query:
variables, prepared statements, the random seed, search_path (each query runs in a
DuckDB session of its own); and no setting names a folder of the machine.  Run through
the executor's unguarded entry (``_run``: as if a parser bug had let the statement in),
query 1 sets the state, query 2 must not see it."""

from __future__ import annotations

import os
import re

import duckdb
import pytest

from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError


@pytest.fixture(scope="module")
def ex(omop_db):
    with Executor(omop_db, settings=ExecutorSettings(timeout_seconds=30)) as executor:
        yield executor


def test_a_variable_set_is_gone_for_the_next_query(ex) -> None:
    ex._run("SET VARIABLE leak = 42")
    assert ex._run("SELECT getvariable('leak') AS v").rows() == [(None,)]
    assert ex._run("SELECT count(*) AS n FROM duckdb_variables()").rows() == [(0,)]


def test_a_prepared_statement_is_gone_for_the_next_query(ex) -> None:
    ex._run("PREPARE leak AS SELECT 42 AS v")
    with pytest.raises(QueryError, match='Prepared statement "leak" does not exist'):
        ex._run("EXECUTE leak")


def test_a_random_seed_set_does_not_seed_the_next_query(ex) -> None:
    plain = duckdb.connect()
    plain.execute("SELECT setseed(0.5)")
    seeded = plain.execute("SELECT random()").fetchone()
    for _ in range(3):
        ex._run("SELECT setseed(0.5) AS s")
        assert ex._run("SELECT random() AS r").rows() != [seeded]


def test_search_path_set_is_gone_for_the_next_query(ex) -> None:
    own = ex._run("SELECT current_setting('search_path') AS p").rows()
    assert own == [("omop.cdm,memory.main",)]  # every query's own: the file's CDM schema first
    ex._run("SET search_path = 'memory.main'")
    assert ex._run("SELECT current_setting('search_path') AS p").rows() == own


def test_no_setting_names_the_home_extension_or_secret_folder(ex) -> None:
    folders = ex._run(
        "SELECT current_setting('home_directory') AS h, current_setting('extension_directory')"
        " AS e, current_setting('secret_directory') AS s, current_setting('temp_directory') AS t"
    )
    assert folders.rows() == [("", "", "", "")]
    home = os.path.expanduser("~")
    # allowed_paths names the database file the user gave (DuckDB adds it when the file
    # is attached with external access off, and it cannot be emptied)
    settings = ex._run("SELECT name, value FROM duckdb_settings() WHERE name <> 'allowed_paths'")
    assert [(n, v) for n, v in settings.rows() if v and home in v] == []


def test_the_only_path_shown_past_the_guard_is_the_database_file_s_own(ex, omop_db) -> None:
    """DuckDB canonicalises the attached file's path (a symlink, /proc/self/fd/N or a
    relative path all show the real one) and lists it, with its WAL names, in
    ``allowed_paths`` and ``duckdb_databases()``, which cannot be changed once external
    access is off: the database file the user named is the one path a query past the
    guard can learn."""
    own = str(omop_db.resolve())
    shown = ex._run(
        "SELECT value AS v FROM duckdb_settings() UNION ALL "
        "SELECT unnest(current_setting('allowed_paths')) UNION ALL "
        "SELECT path FROM duckdb_databases() UNION ALL SELECT file FROM pragma_database_list"
    )
    paths = {
        found
        for (v,) in shown.rows()
        if isinstance(v, str)
        for found in re.findall(r"(?:^|[\s\[,'\"])(/[^\s,\]'\"]+)", v)
    }
    assert own in paths
    assert {p for p in paths if not p.startswith(own)} == set()
