"""Shared fixtures: one real OMOP database built from the embedded data per test session."""

from __future__ import annotations

from pathlib import Path

import pytest

from curate.database.build import build_database
from score.executor import Executor, ExecutorSettings
from tests.paths import SHARED


@pytest.fixture(scope="session")
def omop_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded Synthea 1k database, built fresh for this session."""
    path = tmp_path_factory.mktemp("omop") / "synthea1k.duckdb"
    build_database(path)
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
