"""``sqlgold curate --db postgresql://...``: a source verified on the PostgreSQL copy of
the embedded CDM, compared task by task with the task file verified on DuckDB."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from curate.cli import main as cli
from score.cdm.duckdb_file import describe_database
from tests.paths import PROJECT_SOURCE, REPO

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


@pytest.fixture(scope="module")
def sample_source(tmp_path_factory) -> tuple:
    """Every 12th record of the project's source (answerable and unanswerable ones)."""
    lines = PROJECT_SOURCE.read_text(encoding="utf-8").splitlines()
    sample = [line for i, line in enumerate(lines) if i % 12 == 0]
    path = tmp_path_factory.mktemp("pg_curate") / "sample_source.jsonl"
    path.write_text("\n".join(sample) + "\n", encoding="utf-8")
    return path, [json.loads(line)["id"] for line in sample]


def _curate(source, out, url, *extra):
    result = CliRunner().invoke(
        cli,
        [
            "curate",
            str(source),
            "--db",
            url,
            "--out",
            str(out),
            "--against",
            str(PROJECT_TASKS),
            "-q",
            *extra,
        ],
    )
    return result, json.loads(
        out.with_name(out.stem.removesuffix("_tasks") + "_report.json").read_text(encoding="utf-8")
    )


def test_curate_on_postgres_agrees_with_duckdb(pg_cdm, omop_db, sample_source, tmp_path):
    source, ids = sample_source
    out = tmp_path / "sample_tasks.jsonl"
    result, report = _curate(source, out, pg_cdm.reader_url)
    assert result.exit_code == 0, result.output
    assert report["database"]["engine"] == "postgresql"
    assert "***" in report["database"]["path"] and pg_cdm.reader_password not in out.read_text()
    # the same data: the task file says it was verified on DuckDB's fingerprint
    assert report["database"]["fingerprint"] == describe_database(omop_db).fingerprint
    assert report["settings"]["collation_check"] is True  # on the twin schema cdm_nocase
    agreement = report["engine_agreement"]
    assert agreement["fingerprint_there"] == report["database"]["fingerprint"]
    assert report["counts"]["kept"] == len(ids)  # every sampled record is kept on PostgreSQL
    assert agreement["counts"]["different"] == 0, agreement["different"]
    assert agreement["counts"]["same"] == len(ids)
    assert agreement["counts"]["only_there"] == 277 - len(ids)
    header = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert header["database_fingerprint"] == report["database"]["fingerprint"]
    assert "## Agreement with another task file" in out.with_name("sample_report.md").read_text(
        encoding="utf-8"
    )


def test_without_a_twin_schema_text_golds_are_unresolved(pg_cdm, sample_source, tmp_path):
    """A CDM schema with no case-insensitive twin (not loaded by `sqlgold db load`): no
    collation check, and a gold whose SQL Server meaning depends on case-insensitive text
    is dropped as unresolved, never kept unchecked."""
    import psycopg

    with psycopg.connect(pg_cdm.admin_url, autocommit=True) as pg:
        tables = [
            r[0]
            for r in pg.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'cdm'"
            )
        ]
        pg.execute("DROP SCHEMA IF EXISTS cdm_plain CASCADE")
        pg.execute("CREATE SCHEMA cdm_plain")
        for t in tables:
            pg.execute(f'CREATE VIEW cdm_plain."{t}" AS SELECT * FROM cdm."{t}"')
        pg.execute("GRANT USAGE ON SCHEMA cdm_plain TO sqlgold_reader")
        pg.execute("GRANT SELECT ON ALL TABLES IN SCHEMA cdm_plain TO sqlgold_reader")
    source, ids = sample_source
    out = tmp_path / "sample_tasks.jsonl"
    result, report = _curate(source, out, pg_cdm.reader_url, "--schema", "cdm_plain")
    assert result.exit_code == 0, result.output
    assert report["settings"]["collation_check"] is False
    dropped = [r for r in report["records"] if r["status"] == "dropped"]
    assert dropped  # the sample has golds that compare text
    assert all(r["rule"] == "unresolved_semantics" for r in dropped), dropped
    assert all("collation" in r["reason"] for r in dropped), dropped
    assert report["counts"]["kept"] + len(dropped) == len(ids)
