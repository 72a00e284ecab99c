"""The Spark engine against a real local Spark Connect server."""

from __future__ import annotations

from pathlib import Path

import pytest

from score.cdm.duckdb_file import describe_database
from score.errors import DatabaseError
from score.execution.engines.base import Limits
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError
from tests.score.execution.engines.awkward_values import AWKWARD, duckdb_digest


def test_fingerprint_equals_duckdb(spark_executor: Executor, spark_url: str, omop_db: Path):
    duck = describe_database(omop_db).fingerprint
    assert spark_executor.fingerprint == duck  # stored by db load
    computed = spark_executor.call(_fingerprint_request())
    assert computed.fingerprint == duck  # and recomputed from Spark's own tables


def test_the_fingerprint_is_vouched_for_by_the_tables_files(spark_url, omop_db):
    """After one full pass, a scoring reads only each table's files and columns."""
    import shutil

    from score.cdm.server_fingerprint import BY_MARKERS, FULL_PASS
    from score.defaults import DEFAULT_FINGERPRINT_CACHE
    from score.execution.engines.spark import SparkEngine

    # what earlier tests left in the (test session's) user cache is forgotten: a full pass
    shutil.rmtree(DEFAULT_FINGERPRINT_CACHE, ignore_errors=True)
    engine = SparkEngine(spark_url, None, ExecutorSettings(timeout_seconds=60))
    try:
        markers = engine.change_markers()
        assert set(markers) == set(engine.tables)
        assert all(files for files, _ in markers.values())  # every table has files
        first = engine.fingerprint_check()
        assert first.how == FULL_PASS
        assert first.fingerprint == describe_database(omop_db).fingerprint
        again = engine.fingerprint_check()
        assert (again.fingerprint, again.how) == (first.fingerprint, BY_MARKERS)
        assert engine.fingerprint_check(recompute=True).how == FULL_PASS
    finally:
        engine.close()


@pytest.mark.parametrize("kind", sorted(AWKWARD))
def test_fingerprint_sql_gives_the_same_digest_as_duckdb(spark_url: str, kind: str):
    """The fingerprint's definition in Spark SQL gives DuckDB's digest for values that
    the two print, round or sort differently."""
    from score.cdm.fingerprint import SPARK
    from score.execution.engines.spark import SESSION_CONF
    from score.execution.engines.spark_client import new_session

    _, _, spark_type, values = AWKWARD[kind]
    spark = new_session(spark_url)
    try:
        for key, value in SESSION_CONF.items():
            spark.conf.set(key, value)
        frame = spark.createDataFrame([(v,) for v in values], f"v {spark_type}")
        frame.createOrReplaceTempView("awkward")
        columns = list(spark.table("awkward").dtypes)
        row = spark.sql(SPARK.digest_sql("awkward", columns)).toArrow().to_pylist()[0]
    finally:
        spark.stop()
    count, digest = row.values()
    assert (int(count), digest) == duckdb_digest(kind)


def _fingerprint_request():
    from score.execution.processes.messages import Fingerprint

    return Fingerprint()


def test_cdm_tables_and_types(spark_executor: Executor):
    assert spark_executor.engine == "spark"
    assert spark_executor.schema == "cdm"
    assert "person" in spark_executor.tables and "measurement" in spark_executor.tables
    r = spark_executor.execute(
        "SELECT person_id, birth_datetime, year_of_birth FROM cdm.person ORDER BY person_id LIMIT 1"
    )
    assert r.types == ("INTEGER", "TIMESTAMP", "INTEGER")
    unqualified = spark_executor.execute("SELECT count(*) AS n FROM person")
    assert unqualified.rows() == [(1130,)]


def test_duckdb_sql_is_translated(spark_executor: Executor, executor: Executor):
    sql = (
        "SELECT gender_concept_id, count(*) // 7 AS k, avg(year_of_birth) / 3 AS a, "
        "date_diff('day', min(birth_datetime)::DATE, max(birth_datetime)::DATE) AS span "
        "FROM cdm.person GROUP BY 1 ORDER BY 1"
    )
    spark_rows, duck_rows = spark_executor.execute(sql).rows(), executor.execute(sql).rows()
    assert [r[:2] + r[3:] for r in spark_rows] == [r[:2] + r[3:] for r in duck_rows]
    assert [r[2] for r in spark_rows] == pytest.approx([r[2] for r in duck_rows])


def test_nulls_order_last_as_in_duckdb(spark_executor: Executor, executor: Executor):
    sql = (
        "SELECT p.person_id, d.death_date FROM cdm.person p LEFT JOIN cdm.death d "
        "ON p.person_id = d.person_id ORDER BY d.death_date, p.person_id"
    )
    spark_rows = spark_executor.execute(sql).rows()
    assert spark_rows == executor.execute(sql).rows()
    assert spark_rows[-1][1] is None


def test_row_cap(spark_url: str):
    with Executor(spark_url, settings=ExecutorSettings(max_rows=10)) as ex:
        first = ex.execute("SELECT * FROM cdm.location ORDER BY location_id LIMIT 10")
        assert first.num_rows == 10
        with pytest.raises(QueryError) as e:
            ex.execute("SELECT * FROM cdm.measurement")
        assert e.value.kind == "row_cap"


def test_timeout_interrupts_the_spark_job(spark_url: str):
    """A cross join of 200k x 200k rows runs far past 10 s; the interrupt by tag ends it
    inside the worker (the worker is not killed, so it was not stuck waiting), and the
    same worker's session runs the next query."""
    settings = ExecutorSettings(timeout_seconds=10)
    with Executor(spark_url, settings=settings) as ex:
        with pytest.raises(QueryError) as e:
            ex.execute("SELECT count(*) FROM cdm.measurement a, cdm.measurement b")
        assert e.value.kind == "timeout"
        assert "could not be interrupted" not in e.value.message
        assert ex.workers_replaced == 0 and ex.workers_started == 1
        assert ex.execute("SELECT count(*) AS n FROM cdm.location").rows() == [(20,)]
        assert ex.workers_started == 1


def test_the_session_is_pinned_with_small_scan_batches(spark_url: str):
    """A killed task stops where it checks (once per scan batch): the session reads
    Parquet and ORC in small batches, so a stopped runaway join frees the server soon."""
    from score.execution.engines.spark import SESSION_CONF, SparkEngine

    engine = SparkEngine(spark_url, None, ExecutorSettings())
    try:
        for key, value in SESSION_CONF.items():
            assert engine._spark.conf.get(key) == value, key
        assert int(SESSION_CONF["spark.sql.parquet.columnarReaderBatchSize"]) <= 64
    finally:
        engine.close()


def test_a_stopped_spark_context_is_the_runs_error_not_a_query_outcome():
    """What a stopped SparkContext (or a server gone) says is raised as a DatabaseError
    naming the server; a query's own error stays a QueryError."""
    from score.execution.engines import spark as engine_module

    class Frame:
        def __init__(self, error: Exception) -> None:
            self.error = error

        def limit(self, n: int) -> Frame:
            return self

        def toArrow(self):  # noqa: N802 - pyspark's name
            raise self.error

    class Session:
        def __init__(self, error: Exception) -> None:
            self.error = error

        def addTag(self, tag: str) -> None:  # noqa: N802
            pass

        def removeTag(self, tag: str) -> None:  # noqa: N802
            pass

        def sql(self, text: str) -> Frame:
            return Frame(self.error)

    def engine_raising(error: Exception):
        engine = object.__new__(engine_module.SparkEngine)
        engine.url, engine.broken, engine._spark = "sc://cdm:15002", False, Session(error)
        return engine

    limits = Limits(None, 10, 2**20, 10.0)
    stopped = RuntimeError(
        "(java.lang.IllegalStateException) Cannot call methods on a stopped SparkContext."
    )
    engine = engine_raising(stopped)
    with pytest.raises(DatabaseError) as e:
        engine._fetch("SELECT 1", limits)
    assert "SparkContext has stopped" in e.value.message and e.value.path == "sc://cdm:15002"
    assert engine.broken
    engine = engine_raising(RuntimeError("[DIVIDE_BY_ZERO] Division by zero."))
    with pytest.raises(QueryError):
        engine._fetch("SELECT 1", limits)
    assert not engine.broken


def test_errors_are_classified(spark_executor: Executor):
    cases = {
        "SELECT nope FROM cdm.person": "catalog_error",
        "SELECT person_id FROM cdm.person GROUP BY year_of_birth": "binder_error",
    }
    for sql, kind in cases.items():
        result = spark_executor.try_execute(sql)
        assert isinstance(result, QueryError) and result.kind == kind, (sql, result)


def test_bad_urls_are_one_line_errors():
    with pytest.raises(DatabaseError) as e:
        Executor("sc://localhost:1", settings=ExecutorSettings())
    assert "cannot connect to Spark: no server at localhost:1" in str(e.value)


def test_csv_results_are_read_in_the_worker(spark_executor: Executor, tmp_path: Path):
    """A result stored as CSV is read by a sandboxed DuckDB in the worker, never by the
    Spark server (which may be remote)."""
    (tmp_path / "r.csv").write_text("n,name\n1,a\n2,b\n")
    result = spark_executor.read_csv(tmp_path / "r.csv", tmp_path)
    assert result.rows() == [(1, "a"), (2, "b")]


def test_a_table_written_in_slices_has_every_row(spark_url: str, omop_db: Path):
    """db load sends a large table in slices appended to its staging table (one request
    for a whole 10x table overran Connect); death written in slices of 7 rows has
    DuckDB's digest.  It goes to a database of its own: rewriting cdm.death under the
    other tests' open sessions would pull its files from under them."""
    import duckdb

    from curate.database.spark_load import cdm_arrow, connect, write_table
    from score.cdm.fingerprint import SPARK, compute_fingerprint

    con = duckdb.connect()
    con.execute(f"ATTACH '{omop_db}' AS omop (READ_ONLY)")
    death = cdm_arrow(con.sql("SELECT * FROM omop.cdm.death").to_arrow_table(), "death")
    _, digests = compute_fingerprint(con, "omop", "cdm")
    want = next(d for d in digests if d.name == "death")
    assert death.num_rows > 14  # three slices at least
    spark = connect(spark_url)
    try:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        spark.sql("CREATE DATABASE IF NOT EXISTS slices_test")
        write_table(spark, "death", death, chunk_rows=7, database="slices_test")
        table = "slices_test.`death`"
        columns = list(spark.table(table).dtypes)
        row = spark.sql(SPARK.digest_sql(table, columns)).toArrow().to_pylist()[0]
        assert tuple(row.values()) == (want.rows, want.digest)
    finally:
        spark.sql("DROP DATABASE IF EXISTS slices_test CASCADE")
        spark.stop()
