"""The PostgreSQL engine on a real server: the embedded CDM, read by sqlgold_reader."""

from __future__ import annotations

import psycopg
import pytest
from click.testing import CliRunner

from curate.cli import main as cli
from score.cdm.duckdb_file import describe_database
from score.errors import DatabaseError
from score.execution.engines.base import Limits
from score.execution.engines.postgres import PostgresEngine
from score.execution.executor import Executor, ExecutorSettings
from score.execution.processes.messages import Execute
from score.execution.result import QueryError
from tests.score.execution.engines.awkward_values import AWKWARD, duckdb_digest


@pytest.fixture(scope="module")
def pg_executor(pg_cdm):
    settings = ExecutorSettings(timeout_seconds=3, max_rows=5_000)
    with Executor(pg_cdm.reader_url, settings=settings) as ex:
        yield ex


LIMITS = Limits(None, 1000, 2**26, 10.0)


@pytest.fixture(scope="module")
def pg_engine(pg_cdm):
    """The engine in this process, for the layers below the guard (``check=False``)."""
    engine = PostgresEngine(pg_cdm.reader_url, None, ExecutorSettings(timeout_seconds=10))
    yield engine
    engine.close()


def _kind(ex: Executor, sql: str) -> str:
    outcome = ex.try_execute(sql)
    return outcome.kind if isinstance(outcome, QueryError) else "ok"


def test_opens_the_cdm_schema_as_the_reader(pg_executor):
    assert pg_executor.engine == "postgresql"
    assert pg_executor.schema == "cdm"
    assert {"person", "measurement", "concept"} <= set(pg_executor.tables)
    rows = pg_executor.execute("SELECT count(*) AS n FROM cdm.person").rows()
    assert rows == [(1130,)]
    # search_path is pinned to the CDM schema: unqualified names read it too
    assert pg_executor.execute("SELECT count(*) FROM person").rows() == [(1130,)]


def test_results_match_duckdb_by_value(pg_executor, executor):
    sql = (
        "SELECT gender_concept_id, count(*) AS n, min(birth_datetime) AS first_birth, "
        "avg(year_of_birth) AS mean_year FROM cdm.person GROUP BY 1 ORDER BY 1"
    )
    pg, duck = pg_executor.execute(sql), executor.execute(sql)
    assert pg.num_rows == duck.num_rows == 2
    for a, b in zip(pg.rows(), duck.rows(), strict=True):
        assert a[:3] == b[:3]
        assert a[3] == pytest.approx(b[3], rel=1e-12)
    assert pg.types[1] == "BIGINT" and pg.types[2] == "TIMESTAMP"


def test_same_fingerprint_as_duckdb(pg_executor, omop_db):
    assert pg_executor.fingerprint == describe_database(omop_db).fingerprint


def test_db_info_prints_the_same_fingerprint_on_both_engines(pg_cdm, omop_db):
    runner = CliRunner()
    pg = runner.invoke(cli, ["db", "info", "--db", pg_cdm.reader_url])
    assert pg.exit_code == 0, pg.output
    assert "sqlgold_reader:***@" in pg.output and pg_cdm.reader_url not in pg.output
    duck = runner.invoke(cli, ["db", "info", "--db", str(omop_db)])
    assert duck.exit_code == 0, duck.output

    def fingerprint(output: str) -> str:
        return next(x.split()[1] for x in output.splitlines() if x.startswith("fingerprint"))

    assert fingerprint(pg.output) == fingerprint(duck.output)
    assert fingerprint(pg.output) == describe_database(omop_db).fingerprint


@pytest.mark.parametrize("kind", sorted(AWKWARD))
def test_fingerprint_sql_gives_the_same_digest_on_both_engines(pg_server, kind):
    """The fingerprint's one definition, written in each engine's SQL, gives the same
    digest for values that the engines print, round or sort differently."""
    from score.cdm.fingerprint import POSTGRES

    _, pg_type, _, values = AWKWARD[kind]
    with psycopg.connect(pg_server.url(), autocommit=True) as pg:
        pg.execute(f"CREATE TEMP TABLE awkward (v {pg_type})")
        with pg.cursor() as cur:
            cur.executemany("INSERT INTO awkward VALUES (%s)", [[v] for v in values])
        count, digest = pg.execute(POSTGRES.digest_sql("awkward", [("v", pg_type)])).fetchone()
    assert (int(count), digest) == duckdb_digest(kind)
    assert int(count) == len(values)


REFUSED = [
    ("COPY cdm.person TO STDOUT", "COPY"),
    ("COPY (SELECT 1) TO PROGRAM 'id'", "COPY"),
    ("SELECT pg_read_file('/etc/passwd')", "pg_read_file"),
    ("SELECT pg_read_binary_file('/etc/passwd')", "pg_read_binary_file"),
    ("SELECT * FROM pg_ls_dir('.')", "pg_ls_dir"),
    ("SELECT lo_import('/etc/passwd')", "lo_import"),
    ("SELECT lo_export(1, '/tmp/x')", "lo_export"),
    ("SELECT set_config('search_path', 'public', false)", "set_config"),
    ("SELECT pg_catalog.set_config('work_mem', '1TB', false)", "set_config"),
    ("SELECT current_setting('data_directory')", "current_setting"),
    ("SELECT pg_terminate_backend(pid) FROM pg_stat_activity", "pg_terminate_backend"),
    ("SELECT pg_cancel_backend(1)", "pg_cancel_backend"),
    ("SELECT pg_advisory_lock(42)", "advisory"),
    ("SELECT pg_try_advisory_lock(42)", "advisory"),
    ("SELECT pg_advisory_xact_lock(42)", "advisory"),
    ("SELECT * FROM dblink('dbname=postgres', 'SELECT 1') AS t(a int)", "dblink"),
    ("SELECT query_to_xml('SELECT 1', true, false, '')", "query_to_xml"),
    ("SELECT * FROM cdm.person FOR UPDATE", "FOR UPDATE"),
    ("SELECT * FROM cdm.person FOR SHARE", "FOR UPDATE"),
    ("SELECT * FROM pg_stat_activity", "pg_stat_activity"),
    ("SELECT * FROM pg_settings", "pg_settings"),
    ("DELETE FROM cdm.person", "DELETE"),
    ("CREATE TABLE cdm.x AS SELECT 1", "CREATE"),
    ("SELECT 1 INTO x", "INTO"),
    ("SET search_path = public", "SET"),
    ("SELECT 1; DROP TABLE cdm.person", "2 statements"),
    ("SELECT nextval('s')", "nextval"),
    ("WITH d AS (DELETE FROM cdm.person RETURNING *) SELECT * FROM d", "DELETE"),
]


@pytest.mark.parametrize("sql, reason", REFUSED)
def test_hostile_sql_is_refused_by_the_guard(pg_executor, sql, reason):
    outcome = pg_executor.try_execute(sql)
    assert isinstance(outcome, QueryError)
    assert outcome.kind == "guard_rejected", outcome
    assert reason.lower() in outcome.message.lower()


def test_the_scoring_pipeline_refuses_the_same_before_any_run(pg_executor):
    """With one job, PostgreSQL's own check is done where the answer was parsed (on the
    guard's tree, not a second parse in the process that runs it): each refusal above is
    the prediction's build_error there, and an admitted query runs without a re-check."""
    from score.inputs.predictions import Prediction
    from score.scoring.answer import Answer, PrepareAnswer, RunAnswer
    from score.scoring.gold_cache import GoldCache
    from score.scoring.pipeline import ScoringContext
    from tests.task_factory import make_task, scored_records

    for sql, reason in REFUSED:
        reply = pg_executor.call(PrepareAnswer(Answer(sql=sql, ready_sql=True)))
        assert reply.error is not None and reason.lower() in reply.error.message.lower(), sql
    admitted = pg_executor.call(
        PrepareAnswer(Answer(sql="SELECT count(*) FROM person", ready_sql=True))
    )
    assert admitted.checked and admitted.error is None and admitted.result is None
    ran = pg_executor.call(RunAnswer(admitted.executed_sql, 3.0, checked=True))
    assert ran.rows() == [(1130,)]

    tasks = [make_task(f"t{i}") for i in range(len(REFUSED) + 1)]
    preds = {
        (f"t{i}", "en"): Prediction(f"t{i}", sql=sql, kind="sql")
        for i, (sql, _) in enumerate(REFUSED)
    }
    preds[(f"t{len(REFUSED)}", "en")] = Prediction(
        f"t{len(REFUSED)}", sql="SELECT count(*) AS n FROM person", kind="sql"
    )
    ctx = ScoringContext(pg_executor, GoldCache(None, pg_executor))
    records = list(scored_records(tasks, preds, ctx))
    for record, (sql, reason) in zip(records, REFUSED, strict=False):
        assert record["outcome"] == "build_error", sql
        assert reason.lower() in record["reason"].lower(), sql
    assert records[-1]["outcome"] == "correct"


@pytest.mark.parametrize(
    "sql, kind",
    [
        ("SELECT pg_read_file('/etc/passwd')", "guard_rejected"),  # permission denied
        ("SELECT lo_import('/etc/passwd')", "guard_rejected"),
        ("SELECT * FROM cdm.person FOR UPDATE", "guard_rejected"),  # read-only transaction
        ("COPY cdm.person TO STDOUT", "parse_error"),  # only a SELECT can be a cursor
        ("DELETE FROM cdm.person", "parse_error"),
        ("SELECT * FROM pg_authid", "guard_rejected"),
        # every statement goes by the extended protocol: the server runs one command only
        ("SELECT 1; DELETE FROM cdm.person", "parse_error"),
    ],
)
def test_the_server_contains_what_slips_past_the_guard(pg_engine, sql, kind):
    """The layers below the guard, on the real server: the role, the READ ONLY
    transaction and the cursor refuse these even when the guard is bypassed."""
    with pytest.raises(QueryError) as e:
        pg_engine.run(sql, LIMITS, check=False)
    assert e.value.kind == kind
    with pytest.raises(QueryError) as e:  # and with the check, the guard refuses first
        pg_engine.run(sql, LIMITS)
    assert e.value.kind in ("guard_rejected", "parse_error")


def test_nothing_a_query_does_outlives_it(pg_engine, pg_cdm):
    pg_engine.run("SELECT set_config('search_path', 'public', false)", LIMITS, check=False)
    assert pg_engine.run("SELECT count(*) FROM person", LIMITS).rows() == [(1130,)]
    pg_engine.run("SELECT pg_advisory_lock(4242)", LIMITS, check=False)
    pg_engine.run("SELECT 1", LIMITS)  # the next query releases session advisory locks
    with psycopg.connect(pg_cdm.admin_url) as admin:
        held = admin.execute(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = 4242"
        ).fetchone()[0]
    assert held == 0


def test_the_row_cap_is_exact_and_no_failure_leaves_a_transaction_or_a_setting(pg_engine, caplog):
    """One FETCH reads one row past the cap; after every way a query can fail, the
    session is idle again with its pinned settings (the SET LOCAL went with it), and
    psycopg logs nothing (a query process's log lines reach the user's terminal)."""
    import logging
    import time

    caplog.set_level(logging.WARNING, logger="psycopg")

    from score.execution.engines.base import Limits

    capped = Limits(None, 5, 2**26, 10.0)
    assert len(pg_engine.run("SELECT person_id FROM person LIMIT 5", capped).rows()) == 5
    with pytest.raises(QueryError, match="more than 5 rows"):
        pg_engine.run("SELECT person_id FROM person LIMIT 6", capped)
    setting = "SELECT current_setting('statement_timeout') AS t"  # refused by the guard
    pinned = pg_engine.run(setting, LIMITS, check=False).rows()
    soon = Limits(time.monotonic() + 0.3, 1000, 2**26, 0.3)
    for sql in (
        "SELEC 1",
        "SELECT * FROM nosuch",
        "SELECT 1 / (person_id - person_id) FROM person",
        "SELECT pg_sleep(5)",
        "SELECT 1; SELECT 2",
    ):
        with pytest.raises(QueryError):
            pg_engine.run(sql, soon, check=False)
        assert pg_engine._conn.info.transaction_status.name == "IDLE", sql
        assert not pg_engine.broken, sql
        assert pg_engine.run(setting, LIMITS, check=False).rows() == pinned, sql
    assert [r.getMessage() for r in caplog.records if r.name.startswith("psycopg")] == []


def test_a_run_of_failed_queries_leaves_no_half_prepared_statement(pg_cdm):
    """Every query sends the same BEGIN, unlock, FETCH and ROLLBACK texts; psycopg would
    prepare them server-side after five uses, and a pipeline whose DECLARE failed skips
    such a PREPARE: from then on every good query failed with 'prepared statement
    "_pg3_4" does not exist'."""
    engine = PostgresEngine(pg_cdm.reader_url, None, ExecutorSettings(timeout_seconds=10))
    try:
        for _ in range(6):
            assert engine.run("SELECT count(*) FROM person", LIMITS).rows() == [(1130,)]
            with pytest.raises(QueryError, match="syntax error"):
                engine.run("SELEC 1", LIMITS, check=False)
    finally:
        engine.close()


def test_a_cursor_past_temp_file_limit_leaves_a_usable_session(pg_cdm, caplog):
    """PostgreSQL fails the first ROLLBACK after a FETCH overran temp_file_limit, with
    that same error: the session was left aborted (every later query "current
    transaction is aborted") and the query process retired after each such attack."""
    import logging

    caplog.set_level(logging.WARNING, logger="psycopg")
    settings = ExecutorSettings(timeout_seconds=10, memory_limit="256MB")
    engine = PostgresEngine(pg_cdm.reader_url, None, settings)
    try:
        with pytest.raises(QueryError, match="temp_file_limit"):
            engine.run(
                "SELECT repeat('x', 1000000) FROM generate_series(1, 400)", LIMITS, check=False
            )
        assert not engine.broken
        assert engine.run("SELECT count(*) FROM person", LIMITS).rows() == [(1130,)]
    finally:
        engine.close()
    assert [r.getMessage() for r in caplog.records if r.name.startswith("psycopg")] == []


def test_a_query_process_whose_connection_was_lost_takes_no_further_query(pg_cdm):
    """A backend ended from outside (an administrator, a restart) fails the query that
    finds it gone; that process retires after its reply, so the next query goes to a
    new one instead of to a process already exiting ("exited with status 0")."""
    backends = (
        "SELECT pid FROM pg_stat_activity "
        "WHERE usename = 'sqlgold_reader' AND application_name = 'sqlgold'"
    )
    with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
        others = {pid for (pid,) in admin.execute(backends)}  # other tests' executors
        with Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=5)) as ex:
            assert ex.execute("SELECT 1 AS one").rows() == [(1,)]
            ours = {pid for (pid,) in admin.execute(backends)} - others
            assert len(ours) == 1
            admin.execute("SELECT pg_terminate_backend(%s)", [ours.pop()])
            lost = ex.try_execute("SELECT 2 AS two")
            assert isinstance(lost, QueryError) and "exited" not in lost.message
            assert ex.execute("SELECT 3 AS three").rows() == [(3,)]
            assert ex.workers_started == 2
            # sent ahead: the queries sent after the one that finds its backend gone are
            # sent again to a new process, and run there
            ours = {pid for (pid,) in admin.execute(backends)} - others
            admin.execute("SELECT pg_terminate_backend(%s)", [ours.pop()])
            with ex.stream() as stream:
                for n in (4, 5, 6):
                    stream.send(Execute(f"SELECT {n} AS n"))
                with pytest.raises(QueryError) as lost:
                    stream.receive()
                assert "exited" not in lost.value.message
                assert [stream.receive().rows(), stream.receive().rows()] == [[(5,)], [(6,)]]
            assert ex.workers_started == 3


def test_limits_and_error_kinds(pg_executor):
    assert _kind(pg_executor, "SELECT pg_sleep(10)") == "timeout"
    assert _kind(pg_executor, "SELECT * FROM cdm.measurement") == "row_cap"
    assert _kind(pg_executor, "SELECT nosuch FROM cdm.person") == "catalog_error"
    assert _kind(pg_executor, "SELECT * FROM cdm.nosuch") == "catalog_error"
    assert _kind(pg_executor, "SELECT 1 / 0") == "runtime_error"
    assert _kind(pg_executor, "SELECT person_source_value + 1 FROM cdm.person") == "binder_error"
    assert _kind(pg_executor, "SELECT person_id, count(*) FROM cdm.person") == "binder_error"
    assert _kind(pg_executor, "SELEC 1") == "parse_error"
    # the session survives every failure
    assert pg_executor.execute("SELECT 1 AS one").rows() == [(1,)]


def test_unsafe_roles_are_refused_with_the_fix(pg_cdm):
    with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
        for role in ("sqlgold_writer", "sqlgold_files", "sqlgold_creator"):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
            admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw'")
            admin.execute(f"GRANT USAGE ON SCHEMA cdm TO {role}")
            admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA cdm TO {role}")
        admin.execute("GRANT INSERT ON cdm.person TO sqlgold_writer")
        admin.execute("GRANT pg_read_server_files TO sqlgold_files")
        admin.execute("GRANT CREATE ON SCHEMA cdm TO sqlgold_creator")
    server = pg_cdm.server
    expected = {
        "sqlgold_writer": "may write to cdm.person",
        "sqlgold_files": "member of pg_read_server_files",
        "sqlgold_creator": "may create objects in schema 'cdm'",
        "postgres": "is a superuser",
    }
    for role, reason in expected.items():
        url = server.url() if role == "postgres" else server.url(role, "pw")
        with pytest.raises(DatabaseError) as e:
            Executor(url)
        assert reason in e.value.message
        assert "sqlgold_reader" in e.value.message  # the fix
        assert "\n" not in str(e.value)


def test_a_cdm_in_another_schema_is_read_as_cdm(pg_cdm):
    """An existing CDM in schema omop (--schema omop): gold SQL's cdm.person reads it."""
    with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS omop CASCADE")
        admin.execute("CREATE SCHEMA omop")
        admin.execute("CREATE TABLE omop.person AS SELECT * FROM cdm.person WHERE person_id < 50")
        admin.execute("GRANT USAGE ON SCHEMA omop TO sqlgold_reader")
        admin.execute("GRANT SELECT ON omop.person TO sqlgold_reader")
    with Executor(pg_cdm.reader_url, schema="omop") as ex:
        assert ex.schema == "omop" and set(ex.tables) == {"person"}
        expected = ex.execute("SELECT count(*) FROM person").rows()
        assert expected[0][0] < 1130
        assert ex.execute("SELECT count(*) FROM cdm.person").rows() == expected


def test_a_missing_schema_is_one_clear_error(pg_cdm):
    with pytest.raises(DatabaseError, match="schema 'no_such_cdm' not found"):
        Executor(pg_cdm.reader_url, schema="no_such_cdm")


def test_the_fingerprint_is_recomputed_only_when_a_change_marker_moved(
    pg_cdm,
):
    """A scoring on a server CDM does not read every row: unchanged markers (storage file,
    insert/update/delete counters, columns) vouch for the last full pass; a write moves
    them and the next check makes the full pass again."""
    import time

    from score.cdm.server_fingerprint import BY_MARKERS, FULL_PASS

    # the schema is made again: its markers are new, whatever the user cache holds
    with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
        admin.execute("DROP SCHEMA IF EXISTS marked CASCADE")
        admin.execute("CREATE SCHEMA marked")
        admin.execute("CREATE TABLE marked.person AS SELECT * FROM cdm.person WHERE person_id < 90")
        admin.execute("GRANT USAGE ON SCHEMA marked TO sqlgold_reader")
        admin.execute("GRANT SELECT ON marked.person TO sqlgold_reader")
    engine = PostgresEngine(pg_cdm.reader_url, "marked", ExecutorSettings(timeout_seconds=10))
    try:
        first = engine.fingerprint_check()
        assert first.how == FULL_PASS
        again = engine.fingerprint_check()
        assert (again.fingerprint, again.how) == (first.fingerprint, BY_MARKERS)
        assert engine.fingerprint_check(recompute=True).how == FULL_PASS
        before = engine.change_markers()
        with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
            admin.execute(
                "UPDATE marked.person SET year_of_birth = year_of_birth + 1 "
                "WHERE person_id = (SELECT min(person_id) FROM marked.person)"
            )
        # the writing session published its counters when it ended; wait for the server
        deadline = time.monotonic() + 30
        while engine.change_markers() == before and time.monotonic() < deadline:
            time.sleep(0.2)
        changed = engine.fingerprint_check()
        assert changed.how == FULL_PASS and changed.fingerprint != first.fingerprint
        assert engine.fingerprint_check().how == BY_MARKERS
        # TRUNCATE and the same rows again: a new storage file, the same data
        with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
            admin.execute("CREATE TEMP TABLE keep AS SELECT * FROM marked.person")
            admin.execute("TRUNCATE marked.person")
            admin.execute("INSERT INTO marked.person SELECT * FROM keep")
        reloaded = engine.fingerprint_check()
        assert reloaded.how == FULL_PASS and reloaded.fingerprint == changed.fingerprint
    finally:
        engine.close()
        with psycopg.connect(pg_cdm.admin_url, autocommit=True) as admin:
            admin.execute("DROP SCHEMA marked CASCADE")


def test_no_random_seed_or_prepared_statement_outlives_its_query(pg_engine, pg_cdm):
    """Past the guard, a query can seed random() for the session (a rollback keeps the
    seed): the next query is seeded afresh.  A PREPARE cannot run at all: every query is
    a cursor's SELECT."""
    with psycopg.connect(pg_cdm.admin_url) as plain:
        plain.execute("SELECT setseed(0.5)")
        seeded = plain.execute("SELECT random()").fetchone()
    for _ in range(3):
        pg_engine.run("SELECT setseed(0.5) AS s", LIMITS, check=False)
        assert pg_engine.run("SELECT random() AS r", LIMITS, check=False).rows() != [seeded]
    with pytest.raises(QueryError) as e:
        pg_engine.run("PREPARE leak AS SELECT 42", LIMITS, check=False)
    assert e.value.kind == "parse_error"
    assert pg_engine.run("SELECT count(*) AS n FROM pg_prepared_statements", LIMITS).rows() == [
        (0,)
    ]
