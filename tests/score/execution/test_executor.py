"""The executor: typed results, classified errors, and hostile SQL contained.

Every hostile statement is a real attempt against a real database; after each, the
database must look exactly as before to the next query.
"""

from __future__ import annotations

import datetime as dt
import os
import signal
import threading
import time
from pathlib import Path

import duckdb
import pytest

from score.cdm.schema import CDM_TABLES
from score.errors import DatabaseError
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError


def state(ex: Executor) -> tuple:
    """What the next query sees: the visible relations and a few counts (read past the
    guard, which refuses the catalog functions)."""
    views = ex._run(
        "SELECT schema_name, view_name FROM duckdb_views() WHERE NOT internal ORDER BY ALL"
    ).rows()
    tables = ex._run(
        "SELECT database_name, schema_name, table_name FROM duckdb_tables() ORDER BY ALL"
    ).rows()
    databases = ex._run("SELECT database_name FROM duckdb_databases() ORDER BY 1").rows()
    counts = ex.execute(
        "SELECT (SELECT count(*) FROM cdm.person), (SELECT count(*) FROM cdm.death), "
        "(SELECT max(person_id) FROM cdm.person)"
    ).rows()
    return views, tables, databases, counts


def test_select_returns_typed_columnar_result(executor: Executor):
    r = executor.execute(
        "SELECT gender_concept_id, count(*) AS n, min(birth_datetime) AS first_birth "
        "FROM cdm.person GROUP BY 1 ORDER BY 1"
    )
    assert r.columns == ("gender_concept_id", "n", "first_birth")
    assert r.types == ("INTEGER", "BIGINT", "TIMESTAMP")
    assert sum(n for _, n, _ in r.rows()) == 1130
    assert r.table.num_rows == r.num_rows == 2


def test_every_cdm_table_is_a_view_under_cdm(executor: Executor):
    names = {
        row[0]
        for row in executor.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'cdm'"
        ).rows()
    }
    assert names == set(CDM_TABLES)
    assert executor.execute("SELECT count(*) FROM person").rows() == [(1130,)]


HOSTILE = [
    ("DROP VIEW cdm.person", "DROP"),
    ("CREATE TABLE cdm.x AS SELECT 1 AS a", "CREATE"),
    ("CREATE TEMP TABLE t AS SELECT 1 AS a", "CREATE"),
    ("INSERT INTO cdm.death SELECT * FROM cdm.death", "INSERT"),
    ("UPDATE cdm.person SET year_of_birth = 1900", "UPDATE"),
    ("DELETE FROM cdm.person", "DELETE"),
    ("SET threads = 1", "SET"),
    ("SET enable_external_access = true", "SET"),
    ("PRAGMA threads = 1", "PRAGMA"),
    ("ATTACH ':memory:' AS other", "ATTACH"),
    ("DETACH omop", "DETACH"),
    ("COPY cdm.person TO '/tmp/sqlgold-leak.csv'", "COPY"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "command"),
    ("EXPORT DATABASE '/tmp/sqlgold-export'", "EXPORT"),
    ("CALL pragma_version()", "command"),
    ("CHECKPOINT", "SELECT"),
    ("SELECT 1; DROP VIEW cdm.person", "2 statements"),
    ("SELECT 1 -- harmless\n; DROP VIEW cdm.person", "2 statements"),
    ("SELECT 1 /* ; */ ; DELETE FROM cdm.person", "2 statements"),
    ("SELECT * INTO cdm.y FROM cdm.person", "INTO"),
    ("SELECT * FROM query('DROP VIEW cdm.person')", "query()"),
    ("BEGIN TRANSACTION", "TRANSACTION"),
    ("USE omop", "USE"),
    ("", "empty"),
    ("  ;  ", "no statement"),
]


@pytest.mark.parametrize(("sql", "named"), HOSTILE)
def test_hostile_statements_are_rejected_with_a_named_reason(executor, sql, named):
    before = state(executor)
    with pytest.raises(QueryError) as info:
        executor.execute(sql)
    assert info.value.kind == "guard_rejected"
    assert named.lower() in info.value.message.lower()
    assert state(executor) == before


def test_reading_a_real_file_is_rejected(executor: Executor, tmp_path: Path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a,b\n1,2\n")
    before = state(executor)
    for sql in (
        f"SELECT * FROM read_csv('{secret}')",
        f"SELECT * FROM read_csv_auto('{secret}')",
        f"SELECT * FROM '{secret}'",
        f"SELECT * FROM read_text('{secret}')",
        f"SELECT * FROM glob('{tmp_path}/*')",
    ):
        with pytest.raises(QueryError) as info:
            executor.execute(sql)
        assert info.value.kind == "guard_rejected", sql
    assert state(executor) == before


@pytest.mark.parametrize(
    "sql",
    [
        "DROP VIEW cdm.person",
        "CREATE TABLE cdm.x AS SELECT 1 AS a",
        "CREATE TEMP TABLE t AS SELECT 1 AS a",
        "CREATE VIEW cdm.fake AS SELECT 1 AS a",
        "CREATE OR REPLACE VIEW cdm.person AS SELECT 1 AS person_id",
        "CREATE MACRO cdm.m(a) AS a + 1",
        "ATTACH ':memory:' AS cdm2",
    ],
)
def test_a_statement_that_slips_past_both_parsers_is_rolled_back(executor, sql):
    """Defence in depth: run the statement with the guard bypassed (as if a parser bug
    let it through); the next query must still see the original database."""
    before = state(executor)
    try:
        executor._run(sql)
    except QueryError:
        pass
    assert state(executor) == before


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("SET threads = 1", "locked"),
        ("SET enable_external_access = true", "locked"),
        ("ATTACH '/tmp/sqlgold-other.duckdb' AS other", "disabled"),
        ("COPY (SELECT 1) TO '/tmp/sqlgold-leak.csv'", "disabled"),
        ("INSTALL httpfs", "disabled"),
        ("SELECT * FROM read_csv('/etc/hostname')", "disabled"),
    ],
)
def test_the_sandbox_refuses_what_slips_past_the_guard(executor, sql, message):
    before = state(executor)
    with pytest.raises(QueryError) as info:
        executor._run(sql)
    assert info.value.kind == "guard_rejected"
    assert message in info.value.message
    assert state(executor) == before
    assert not Path("/tmp/sqlgold-leak.csv").exists()


def test_duckdb_parser_is_asked_when_sqlglot_cannot_parse(executor: Executor):
    # sqlglot cannot parse EXPORT DATABASE; DuckDB's parser names the statement
    with pytest.raises(QueryError) as info:
        executor.execute("EXPORT DATABASE '/tmp/x'")
    assert info.value.kind == "guard_rejected" and "EXPORT" in info.value.message


@pytest.mark.parametrize(
    ("sql", "kind"),
    [
        ("SELECT FROM WHERE", "parse_error"),
        ("SELEC 1", "parse_error"),
        ("SELECT * FROM cdm.patients", "catalog_error"),
        ("SELECT patient_id FROM cdm.person", "catalog_error"),
        ("SELECT nosuchfunction(1)", "catalog_error"),
        ("SELECT person_id FROM cdm.person GROUP BY gender_concept_id", "binder_error"),
        ("SELECT CAST('abc' AS INTEGER)", "runtime_error"),
        ("SELECT * FROM cdm.measurement", "row_cap"),
    ],
)
def test_errors_are_classified(executor: Executor, sql: str, kind: str):
    result = executor.try_execute(sql)
    assert isinstance(result, QueryError)
    assert result.kind == kind, result.message


def test_row_cap_is_configurable(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(max_rows=5)) as ex:
        assert ex.execute("SELECT * FROM cdm.person LIMIT 5").num_rows == 5
        with pytest.raises(QueryError, match="more than 5 rows"):
            ex.execute("SELECT * FROM cdm.person LIMIT 6")


def test_runaway_cross_join_stops_at_the_timeout(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(timeout_seconds=1.0)) as ex:
        start = time.perf_counter()
        result = ex.try_execute(
            "SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b"
        )
        elapsed = time.perf_counter() - start
        assert isinstance(result, QueryError) and result.kind == "timeout"
        # it stopped (a full run takes many minutes); the margin is generous on purpose
        assert elapsed < 15
        # and the connection is usable at once, not interrupted again
        assert ex.execute("SELECT count(*) FROM cdm.person").rows() == [(1130,)]


def test_memory_limit_is_enforced(omop_db: Path):
    settings = ExecutorSettings(memory_limit="30MB", threads=1)
    with Executor(omop_db, settings=settings) as ex:
        result = ex.try_execute(
            "SELECT string_agg(measurement_source_value || measurement_id::VARCHAR, ',') "
            "FROM cdm.measurement, range(10) t(r)"
        )
        assert isinstance(result, QueryError) and result.kind == "runtime_error"
        assert "memory" in result.message.lower()


def test_fixed_today_pins_current_date_calls(omop_db: Path):
    today = dt.date(2025, 12, 31)
    with Executor(omop_db, settings=ExecutorSettings(today=today)) as ex:
        r = ex.execute("SELECT current_date, now(), today(), current_date - INTERVAL 1 YEAR")
        assert r.rows() == [
            (today, dt.datetime(2025, 12, 31), today, dt.datetime(2024, 12, 31)),
        ]
        prepared = ex.prepare("SELECT count(*) FROM cdm.death WHERE death_date < now()")
        assert "2025-12-31" in prepared.sql
    with Executor(omop_db) as ex:  # without a fixed today the clock is real
        assert ex.execute("SELECT current_date").rows()[0][0] >= dt.date(2026, 1, 1)


def test_other_schema_names_map_to_cdm(omop_db: Path, tmp_path: Path):
    other = tmp_path / "synthea_other.duckdb"
    con = duckdb.connect(str(other))
    con.execute(f"ATTACH '{omop_db}' AS src (READ_ONLY)")
    con.execute("CREATE SCHEMA dbt_synthea_dev")
    for table in CDM_TABLES:
        con.execute(f"CREATE TABLE dbt_synthea_dev.{table} AS SELECT * FROM src.cdm.{table}")
    con.close()
    with Executor(omop_db) as original, Executor(other, schema="dbt_synthea_dev") as ex:
        assert ex.schema == "dbt_synthea_dev"
        sql = "SELECT count(*), max(person_id) FROM cdm.person"
        assert ex.execute(sql).rows() == original.execute(sql).rows()
        # same content, so the same fingerprint, computed here (nothing stored)
        assert ex.fingerprint == original.fingerprint
    with Executor(other) as ex:  # the only schema with a person table is found
        assert ex.schema == "dbt_synthea_dev"
    with pytest.raises(DatabaseError, match="not found"):
        Executor(other, schema="nope")


def test_every_name_of_a_cdm_table_reads_it_whatever_the_file_s_schema(
    omop_db: Path, tmp_path: Path
):
    """``cdm.person``, ``person`` and ``main.person`` read the same table on a file whose
    CDM schema is ``cdm`` (its tables found first, no view between) and on one whose
    schema has another name (the views answer ``cdm.`` and ``main.``)."""
    other = tmp_path / "other_schema.duckdb"
    con = duckdb.connect(str(other))
    con.execute(f"ATTACH '{omop_db}' AS src (READ_ONLY)")
    con.execute("CREATE SCHEMA omop_cdm")
    for table in ("person", "observation_period", "concept"):
        con.execute(f"CREATE TABLE omop_cdm.{table} AS SELECT * FROM src.cdm.{table}")
    con.close()
    names = ("cdm.person", "person", "main.person", '"cdm"."PERSON"')
    for path in (omop_db, other):
        with Executor(path) as ex:
            counts = {ex.execute(f"SELECT count(*) AS n FROM {name}").rows()[0] for name in names}
            assert counts == {(1130,)}, path
            joined = ex.execute(
                "SELECT count(*) AS n FROM person p JOIN cdm.observation_period o "
                "ON o.person_id = p.person_id"
            ).rows()
            assert joined[0][0] > 0


def test_missing_database_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(DatabaseError, match="no database file"):
        Executor(tmp_path / "missing.duckdb")


def test_threads_each_get_their_own_cursor(executor: Executor):
    results: list = []

    def work(k: int) -> None:
        for _ in range(5):
            r = executor.execute(f"SELECT count(*) + {k} FROM cdm.person")
            results.append((k, r.rows()[0][0]))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == sorted((k, 1130 + k) for k in range(4) for _ in range(5))


def test_guard_names_are_unquoted_and_case_folded(executor: Executor):
    for sql in (
        "SELECT content FROM \"Read_Text\"('/etc/hostname')",
        "SELECT * FROM main.\"glob\"('/etc/*')",
        "SELECT system.main.\"CURRENT_SETTING\"('temp_directory')",
        "SELECT * FROM system.main.duckdb_settings()",
        "SELECT * FROM pg_catalog.pg_settings",
        'SELECT * FROM "pragma_database_list"',
        "SELECT SetSeed(0.5)",
        "SELECT * FROM json_execute_serialized_sql('{}')",
    ):
        result = executor.try_execute(sql)
        assert isinstance(result, QueryError) and result.kind == "guard_rejected", sql


def test_a_query_only_duckdb_can_parse_is_judged_on_duckdb_s_parse(omop_db: Path):
    # deeper than sqlglot builds a tree (pure or compiled: sqlglotc reads 400 levels)
    deep = "(" * 600 + "{} " + ")" * 600
    with Executor(omop_db, settings=ExecutorSettings(today=dt.date(2025, 12, 31))) as ex:
        assert ex.execute("SELECT " + deep.format("1") + " AS n").rows() == [(1,)]
        for inner in ("(SELECT content FROM read_text('/etc/hostname'))", "current_setting('x')"):
            result = ex.try_execute("SELECT " + deep.format(inner))
            assert isinstance(result, QueryError) and result.kind == "guard_rejected", inner
        # a fixed today is pinned among the text's tokens, where sqlglot builds no tree
        result = ex.execute("SELECT " + deep.format("current_date") + " AS d")
        assert result.rows() == [(dt.date(2025, 12, 31),)]
        # a clock reader the pin cannot see is refused: the day would not be the fixed one
        result = ex.try_execute("SELECT " + deep.format("other.now()"))
        assert isinstance(result, QueryError) and "current date" in result.message, result


def test_the_file_system_is_closed_even_past_the_guard(executor: Executor, omop_db: Path):
    for sql in (
        f"SELECT size FROM read_blob('{omop_db}')",  # the attached file itself
        "SELECT * FROM glob('.tmp/*')",  # DuckDB allows its temp directory by default
        "SELECT path FROM duckdb_temporary_files()",
    ):
        result = executor.try_execute(sql)
        assert isinstance(result, QueryError) and result.kind == "guard_rejected", sql
    for sql in (f"SELECT size FROM read_blob('{omop_db}')", "SELECT * FROM glob('.tmp/*')"):
        with pytest.raises(QueryError, match="disabled"):
            executor._run(sql)
    settings = executor._run("SELECT current_setting('temp_directory')").rows()
    assert settings == [("",)]  # no spilling: no directory of its own to read


def test_long_sql_is_refused_before_parsing(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(max_sql_bytes=1000)) as ex:
        assert ex.execute("SELECT " + "1 + " * 200 + "1 AS n").rows() == [(201,)]
        with pytest.raises(QueryError, match="over the limit of 1,000 bytes"):
            ex.execute("SELECT " + "1 + " * 300 + "1 AS n")


def test_the_guard_cache_keeps_only_short_texts():
    from score.execution import guard

    guard._checked_cached.cache_clear()
    long_sql = "SELECT 1 AS n WHERE " + " OR ".join(["1 = 1"] * 2000)
    assert len(long_sql) > guard.CACHED_TEXT_CHARS
    guard.check_statement(long_sql)
    guard.check_statement("SELECT 1")
    info = guard._checked_cached.cache_info()
    assert info.currsize == 1 and info.maxsize <= 64


def test_a_query_that_cannot_be_interrupted_is_killed_and_replaced(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        result = ex.try_execute("SELECT length(lpad('x', 200000000, 'y'))")  # ~3 s
        assert isinstance(result, QueryError) and result.kind == "timeout"
        assert "process was ended" in result.message
        assert ex.workers_replaced == 1
        assert ex.execute("SELECT count(*) FROM cdm.person").rows() == [(1130,)]


def test_a_worker_that_dies_is_that_query_s_runtime_error(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=20)
    with Executor(omop_db, settings=settings) as ex:
        (worker,) = ex._pool._lane_of
        timer = threading.Timer(0.5, lambda: os.kill(worker.process.pid, signal.SIGKILL))
        timer.start()
        result = ex.try_execute(
            "SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b"
        )
        timer.join()
        assert isinstance(result, QueryError) and result.kind == "runtime_error"
        assert "SIGKILL" in result.message
        assert ex.execute("SELECT 1").rows() == [(1,)]


def test_memory_that_duckdb_does_not_track_is_bounded_by_the_worker(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(memory_limit="300MB")) as ex:
        assert ex.address_limit is not None
        for sql in ("SELECT len(range(300000000))", "SELECT length(repeat('x', 2000000000))"):
            result = ex.try_execute(sql)
            assert isinstance(result, QueryError) and result.kind == "runtime_error", sql
            assert "memory" in result.message.lower()
        assert ex.workers_peak_rss_kib() * 1024 < ex.address_limit


def test_an_executor_opened_in_the_background_is_the_same_and_is_closed(omop_db: Path):
    from score.execution.executor import OpeningExecutor

    with OpeningExecutor(omop_db) as opening:
        executor = opening.result()
        assert executor.execute("SELECT count(*) AS n FROM cdm.person").rows() == [(1130,)]
        workers = [w.process for w in executor._pool._lane_of]
    assert workers and not any(p.is_alive() for p in workers)


def test_an_executor_that_cannot_open_in_the_background_raises_where_it_is_asked_for(
    tmp_path: Path,
):
    from score.execution.executor import OpeningExecutor

    with OpeningExecutor(tmp_path / "none.duckdb") as opening:
        with pytest.raises(DatabaseError, match="no database file"):
            opening.result()


def test_query_processes_start_with_one_blas_thread_and_the_caller_keeps_its_environment(
    omop_db: Path,
):
    """NumPy's OpenBLAS spins a thread per core at import (score.execution.processes.fork_server);
    the fork server, and so every worker, gets one unless the caller set the variable."""
    import subprocess
    import sys

    code = (
        "import os, sys\n"
        "from pathlib import Path\n"
        "from score.execution.executor import Executor\n"
        "with Executor(sys.argv[1]) as ex:\n"
        "    pid = next(iter(ex._pool._lane_of)).process.pid\n"
        "    env = Path(f'/proc/{pid}/environ').read_bytes().split(b'\\0')\n"
        "    print([v.decode() for v in env if v.startswith(b'OPENBLAS_NUM_THREADS=')])\n"
        "    print(os.environ.get('OPENBLAS_NUM_THREADS'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    found = subprocess.run(
        [sys.executable, "-c", code, str(omop_db)], env=env, capture_output=True, text=True
    )
    assert found.stdout.split("\n")[:2] == ["['OPENBLAS_NUM_THREADS=1']", "None"], found.stderr
    chosen = subprocess.run(
        [sys.executable, "-c", code, str(omop_db)],
        env={**env, "OPENBLAS_NUM_THREADS": "2"},
        capture_output=True,
        text=True,
    )
    assert chosen.stdout.split("\n")[:2] == ["['OPENBLAS_NUM_THREADS=2']", "2"], chosen.stderr
