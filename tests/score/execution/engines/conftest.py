"""The Spark executor of the engine tests (the server is tests/conftest.py's ``spark_url``)."""

from __future__ import annotations

import pytest

from score.execution.executor import Executor, ExecutorSettings


@pytest.fixture(scope="session")
def spark_executor(spark_url: str):
    with Executor(spark_url, settings=ExecutorSettings(timeout_seconds=60)) as ex:
        yield ex
