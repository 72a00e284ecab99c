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


def test_text2omop_golds_curated_on_duckdb_give_the_same_result_on_postgres(
    pg_cdm, omop_db, shared_dir, tmp_path
):
    """TEXT-TO-OMOP's PostgreSQL golds, transpiled to DuckDB and verified there under the
    documented options, give on PostgreSQL the result each task pins: no gold drifts
    between the engines.  Those whose result is the engine's luck (a LIMIT through ties,
    rows tied in the order compared) are dropped on DuckDB, each with its rule."""
    from score.comparison.result_hash import result_sha256
    from score.execution.executor import Executor, ExecutorSettings
    from score.scoring.gold_cache import GOLD_DIALECT
    from score.scoring.gold_pin import task_today

    test_file = shared_dir / "corpora" / "text2omop" / "test.jsonl"
    if not test_file.is_file():
        pytest.skip(f"{test_file} is not there")
    one_per_gold: dict[str, str] = {}
    for line in test_file.read_text(encoding="utf-8").splitlines():
        one_per_gold.setdefault(json.loads(line)["output"].strip(), line)
    source = tmp_path / "text2omop_distinct.jsonl"
    source.write_text("\n".join(one_per_gold.values()) + "\n", encoding="utf-8")
    out = tmp_path / "t2o_tasks.jsonl"
    options = ["--format", "text2omop", "--min-rows", "0", "--allow-all-zero"]
    done = CliRunner().invoke(
        cli,
        [
            "curate",
            str(source),
            "--db",
            str(omop_db),
            "--out",
            str(out),
            "-q",
            *options,
            "--today",
            "2026-01-01",
            "--jobs",
            "2",
        ],
    )
    assert done.exit_code == 0, done.output
    tasks = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()[1:]]
    answerable = [t for t in tasks if t["answerable"]]
    assert len(answerable) >= 170
    report = json.loads(out.with_name("t2o_report.json").read_text(encoding="utf-8"))
    dropped = {r["rule"] for r in report["records"] if r["status"] == "dropped"}
    assert dropped <= {"deterministic", "limit_needs_order", "no_ties_at_limit"}, dropped
    differ = []
    with Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=30)) as ex:
        for task in answerable:
            result = ex.execute(task["gold_sql"], today=task_today(task), dialect=GOLD_DIALECT)
            ordered = bool(task["order_matters"])
            if result_sha256(result, ordered=ordered) != task["gold_result"]["sha256"]:
                differ.append(task["id"])
    assert differ == []
