"""One local Spark Connect server per test session, with the embedded CDM loaded.

The server is the pyspark wheel's own (``make test`` installs the ``spark`` extra); it
listens on a free port with its state in a temporary folder, so it never meets a
server started with ``make spark-up``.  Without Java the Spark tests skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from curate.database import spark_server
from score.execution.executor import Executor, ExecutorSettings


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
def spark_executor(spark_url: str):
    with Executor(spark_url, settings=ExecutorSettings(timeout_seconds=60)) as ex:
        yield ex
