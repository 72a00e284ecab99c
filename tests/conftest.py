"""Shared fixtures: one real OMOP database built from the embedded data per test session.

The user's cache folder (:func:`score.defaults.cache_root`) is a folder of this session's
own, so no test reads what another run left there, and nothing lands in the user's.
"""

from __future__ import annotations

import atexit
import os
import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

_CACHE_HOME = tempfile.mkdtemp(prefix="sqlgold-test-cache-")
os.environ["XDG_CACHE_HOME"] = _CACHE_HOME  # before any sqlgold module asks for it
atexit.register(shutil.rmtree, _CACHE_HOME, ignore_errors=True)

from curate.database import spark_server  # noqa: E402 - after the cache folder is set
from score.cdm.embedded import build_database  # noqa: E402
from score.execution.executor import Executor, ExecutorSettings  # noqa: E402
from tests.paths import SHARED  # noqa: E402
from tests.pg_server import PostgresServer, start_server  # noqa: E402


@pytest.fixture(scope="session")
def omop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded Synthea 1k database, built fresh for this session."""
    path = tmp_path_factory.mktemp("omop") / "synthea1k.duckdb"
    build_database(path)
    return path


#: How many persons :func:`changed_db` deletes from its copy of the embedded database.
DELETED_PERSONS = 49


@pytest.fixture(scope="session")
def changed_db(omop_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the embedded database with the 49 lowest-numbered persons deleted after
    ``db build`` (so ``sqlgold.build_info`` still holds the original's fingerprint)."""
    import duckdb

    path = tmp_path_factory.mktemp("changed") / "synthea1k.duckdb"
    path.write_bytes(omop_db.read_bytes())
    con = duckdb.connect(str(path))
    try:
        con.execute(
            "DELETE FROM cdm.person WHERE person_id IN "
            f"(SELECT person_id FROM cdm.person ORDER BY person_id LIMIT {DELETED_PERSONS})"
        )
        con.execute("CHECKPOINT")
    finally:
        con.close()
    return path


@pytest.fixture(scope="session")
def executor(omop_db: Path):
    """A shared executor with default limits (read-only: tests cannot disturb it)."""
    with Executor(omop_db, settings=ExecutorSettings(timeout_seconds=30)) as ex:
        yield ex


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared beside the repository; tests that need it skip when it is absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is not present beside the repository")
    return SHARED


@pytest.fixture(scope="session")
def querylibrary_dir(shared_dir: Path) -> Path:
    path = shared_dir / "querylibrary" / "queries"
    if not path.is_dir():
        pytest.skip("../shared/querylibrary is not present")
    return path


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server of its own for this session (initdb + pg_ctl from the installed
    server binaries), stopped at the end; skips only when the binaries are absent."""
    try:
        server = start_server()
    except LookupError as e:
        pytest.skip(str(e))
    try:
        yield server
    finally:
        server.stop()


@dataclass(frozen=True)
class PostgresCdm:
    """The embedded CDM loaded into ``pg_server`` by ``sqlgold db load`` (schema cdm)."""

    server: PostgresServer
    admin_url: str
    reader_url: str
    reader_password: str  # roles are server-wide: every test's load must keep it


@pytest.fixture(scope="session")
def pg_cdm(pg_server: PostgresServer, omop_db: Path) -> PostgresCdm:
    """The embedded CDM in PostgreSQL, loaded once per session; tests only read it."""
    from curate.database.load import load_into_postgres

    password = secrets.token_hex(12)
    report = load_into_postgres(pg_server.url(), omop_db, reader_password=password)
    return PostgresCdm(pg_server, pg_server.url(), report.reader_url, password)


# -- one local Spark Connect server per test session, with the embedded CDM loaded ------
# The server is the pyspark wheel's own (``make test`` installs the ``spark`` extra); it
# listens on a free port with its state in a temporary folder, so it never meets a
# server started with ``make spark-up``.  Without Java the Spark tests skip.


@pytest.fixture(scope="session")
def spark_url(omop_db: Path, tmp_path_factory: pytest.TempPathFactory):
    if not spark_server.java_available():
        pytest.skip("java is not on PATH: the Spark engine tests need Java 17")
    try:
        spark_server.spark_home()
    except spark_server.SparkServerError as e:
        pytest.fail(f"{e} (make test installs it)")
    from curate.database.spark_load import load_cdm

    folder = tmp_path_factory.mktemp("spark")
    port = spark_server.free_port()
    spark_server.start(port, folder, memory="1g", persistent=False)
    url = f"sc://localhost:{port}"
    try:
        load_cdm(omop_db, url)
        yield url
    finally:
        spark_server.stop(folder)


@pytest.fixture(scope="session")
def made_suite(omop_db: Path, tmp_path_factory: pytest.TempPathFactory):
    """A small real test suite of three variants of the test database, built for the
    planted tasks of :func:`tests.score.suite.made_suite.suite_tasks` (their task file
    is ``made_suite.folder.parent / "tasks.jsonl"``)."""
    from score.inputs.task_manifest import set_hash
    from tests.score.suite.made_suite import SUITE_DROPS, make_suite, suite_tasks
    from tests.task_factory import write_task_file

    root = tmp_path_factory.mktemp("suite")
    tasks = suite_tasks()
    write_task_file(root / "tasks.jsonl", tasks)
    return make_suite(
        omop_db,
        root / "suite",
        task_set_sha256=set_hash(tasks),
        cache=root / "databases",
        drops=SUITE_DROPS,
    )
