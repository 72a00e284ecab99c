"""Hostile SQL on Spark: every refusal is a real attempt against a real server.

Spark has no read-only transaction, so each attempt is sent twice: through the whole
path (the statement guard, then the Spark guard) and past the statement guard
(``Executor._run``, as if a parser bug had let it through), where the Spark guard alone
must hold.  After the attempts, a fresh session sees the CDM unchanged.
"""

from __future__ import annotations

import pytest

from score.execution.engines.spark_sql import check_spark, to_spark
from score.execution.executor import Executor
from score.execution.result import QueryError

CDM = {"person", "death", "measurement"}

#: Spark SQL that must never run, by what it would do.
SPARK_ATTEMPTS = {
    "parquet file": "SELECT * FROM parquet.`/etc/passwd`",
    "csv file": "SELECT * FROM csv.`/etc/passwd`",
    "text file": "SELECT * FROM text.`/etc/passwd`",
    "json file": "SELECT * FROM json.`/etc`",
    "orc file": "SELECT * FROM orc.`/tmp`",
    "binary file": "SELECT * FROM binaryFile.`/etc/passwd`",
    "read_files": "SELECT * FROM read_files('/etc/passwd')",
    "other database": "SELECT * FROM sqlgold.build_info",
    "catalog": "SELECT * FROM spark_catalog.cdm.person",
    "reflect": "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
    "java_method": "SELECT java_method('java.lang.System', 'exit', 0)",
    "try_reflect": "SELECT try_reflect('java.lang.Runtime', 'getRuntime')",
    "input_file_name": "SELECT input_file_name() FROM cdm.person",
    "current_user": "SELECT current_user()",
    "catalog udf": "SELECT cdm.evil(person_id) FROM cdm.person",
    "add jar": "ADD JAR /tmp/evil.jar",
    "add file": "ADD FILE /etc/passwd",
    "add archive": "ADD ARCHIVE /tmp/x.zip",
    "create function": "CREATE FUNCTION evil AS 'com.example.Evil'",
    "create temporary function": "CREATE TEMPORARY FUNCTION evil AS 'com.example.Evil'",
    "set": "SET spark.sql.ansi.enabled = true",
    "reset": "RESET",
    "cache": "CACHE TABLE cdm.person",
    "uncache": "UNCACHE TABLE cdm.person",
    "insert": "INSERT INTO cdm.person SELECT * FROM cdm.person",
    "insert overwrite directory": "INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1",
    "load data": "LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE cdm.person",
    "msck": "MSCK REPAIR TABLE cdm.person",
    "create table": "CREATE TABLE cdm.evil AS SELECT 1 AS x",
    "create view": "CREATE TEMPORARY VIEW person AS SELECT 1 AS x",
    "drop": "DROP TABLE cdm.death",
    "alter": "ALTER TABLE cdm.death RENAME TO cdm.gone",
    "truncate": "TRUNCATE TABLE cdm.death",
    "use": "USE sqlgold",
    "two statements": "SELECT 1; DROP TABLE cdm.death",
    # issue 57: products a cancel cannot stop, which held the server's cores for minutes
    "three-way product": (
        "SELECT count(*) FROM cdm.measurement a, cdm.measurement b, cdm.person c"
    ),
    "four-way cross join": (
        "SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b "
        "CROSS JOIN cdm.measurement c CROSS JOIN cdm.person d"
    ),
    "product of a product": (
        "SELECT count(*) FROM (SELECT a.person_id FROM cdm.measurement a, cdm.measurement b) x "
        "CROSS JOIN cdm.person c"
    ),
    "three-way inequality join": (
        "SELECT count(*) FROM cdm.measurement a JOIN cdm.measurement b "
        "ON a.value_as_number < b.value_as_number JOIN cdm.person c ON c.year_of_birth < 1900"
    ),
}


@pytest.mark.parametrize("name", sorted(SPARK_ATTEMPTS))
def test_spark_guard_refuses(name: str):
    with pytest.raises(QueryError) as e:
        check_spark(SPARK_ATTEMPTS[name], CDM)
    assert e.value.kind in ("guard_rejected", "parse_error")


def test_spark_guard_admits_cdm_queries():
    check_spark("WITH p AS (SELECT * FROM cdm.person) SELECT count(*) FROM p", CDM)
    check_spark("SELECT x FROM person LATERAL VIEW explode(array(1, 2)) t AS x", CDM)
    check_spark(to_spark("SELECT * FROM generate_series(1, 3)"), CDM)
    # a product of two stops when cancelled; one-row relations and join keys multiply nothing
    check_spark("SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b", CDM)
    check_spark(
        "WITH t AS (SELECT count(*) AS n FROM cdm.person) "
        "SELECT p.person_id, t.n, u.n FROM cdm.person p, t, t u",
        CDM,
    )
    check_spark(
        "SELECT count(*) FROM cdm.person p, cdm.death d, cdm.measurement m "
        "WHERE p.person_id = d.person_id AND m.person_id = p.person_id",
        CDM,
    )
    check_spark(
        "SELECT count(*) FROM cdm.person p JOIN cdm.death d USING (person_id) "
        "JOIN cdm.measurement m USING (person_id)",
        CDM,
    )


#: DuckDB-dialect attempts (what a model would send) at the same things.
DUCKDB_ATTEMPTS = [
    'SELECT * FROM parquet."/etc/passwd"',
    'SELECT * FROM csv."/etc/passwd"',
    'SELECT * FROM "text"."/etc/passwd"',
    'SELECT * FROM json."/etc"',
    "SELECT * FROM read_files('/etc/passwd')",
    "SELECT * FROM sqlgold.build_info",
    "SELECT reflect('java.lang.System', 'getenv', 'HOME')",
    "SELECT java_method('java.lang.System', 'exit', 0)",
    "SELECT input_file_name() FROM cdm.person",
]


@pytest.mark.parametrize("sql", DUCKDB_ATTEMPTS + sorted(set(SPARK_ATTEMPTS.values())))
def test_attempts_are_contained_on_spark(spark_executor: Executor, sql: str):
    for run in (spark_executor.try_execute, _unguarded(spark_executor)):
        result = run(sql)
        assert isinstance(result, QueryError), (sql, result)
        assert result.kind in ("guard_rejected", "parse_error"), (sql, result)


def _unguarded(ex: Executor):
    def run(sql: str):
        try:
            return ex._run(sql)
        except QueryError as e:
            return e

    return run


def test_cdm_unchanged_after_attempts(spark_url: str):
    """Runs after the attempts (file order): a new session sees the same CDM and the
    session settings the engine pins."""
    with Executor(spark_url) as ex:
        assert ex.execute("SELECT count(*) AS n FROM cdm.death").rows() == [(142,)]
        assert ex.execute("SELECT count(*) AS n FROM cdm.person").rows() == [(1130,)]
        assert "evil" not in ex.tables and "gone" not in ex.tables
        assert ex.execute("SELECT 1 / 0 AS x").rows() == [(None,)]
