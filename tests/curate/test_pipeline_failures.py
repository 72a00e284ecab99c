"""No record can end a run: a failure injected into each stage becomes that record's drop."""

from __future__ import annotations

import json

import pytest

from curate import pipeline
from curate.reading import gold as gold_reading
from curate.sources import load as importers
from curate.tasks import validated
from curate.write.curation import curate_to_files
from score.errors import DatabaseError, SqlgoldError

RECORDS = [
    {
        "format": "sqlgold.source/1",
        "id": "a-answerable",
        "question": "How many persons?",
        "gold_sql": "SELECT COUNT(*) AS n FROM person",
        "gold_dialect": "tsql",
        "answer_sql": "SELECT count(*) FROM cdm.person",
        "answer_dialect": "duckdb",
    },
    {
        "format": "sqlgold.source/1",
        "id": "b-unanswerable",
        "question": "What does the note table say?",
        "answerable": False,
        "unanswerable_because": {"empty_tables": ["note_nlp"]},
    },
]


class Injected(RuntimeError):
    pass


def _boom(*args, **kwargs):
    raise Injected("injected\nfailure")


# (name patched in curate.pipeline, or gold_reading:name or validated:name (stage
# validate's module), stage named in the reason,
# records it reaches)
STAGES = [
    ("gold_reading:render_record_gold_tree", "ohdsi", {"a-answerable"}),
    ("gold_reading:transpile", "transpile", {"a-answerable"}),
    ("run_gold", "verify", {"a-answerable"}),
    ("check_answer", "answer", {"a-answerable"}),
    ("check_unanswerable", "unanswerable", {"b-unanswerable"}),
    ("classify_tier", "tier", {"a-answerable"}),
    ("validated:validation_errors", "validate", {"a-answerable", "b-unanswerable"}),
]


@pytest.fixture()
def source(tmp_path):
    path = tmp_path / "tiny_source.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    return path


@pytest.mark.parametrize(("target", "stage", "reached"), STAGES)
def test_a_failure_in_any_stage_is_that_records_internal_drop(
    executor, source, tmp_path, monkeypatch, target, stage, reached
):
    module, _, name = target.rpartition(":")
    modules = {"gold_reading": gold_reading, "validated": validated, "": pipeline}
    monkeypatch.setattr(modules[module], name, _boom)
    out = tmp_path / "tiny_tasks.jsonl"
    if len(reached) == 2:  # no task kept: an error, but the report is written
        with pytest.raises(SqlgoldError, match="no task kept"):
            curate_to_files(source, "jsonl", executor, out=out)
        report = json.loads(out.with_name("tiny_report.json").read_text(encoding="utf-8"))
        assert {r["stage"] for r in report["records"]} == {"internal"}
        return
    run = curate_to_files(source, "jsonl", executor, out=out)
    records = {r["id"]: r for r in run.report["records"]}
    assert set(records) == {"a-answerable", "b-unanswerable"}  # every record keeps its place
    for record_id in reached:
        entry = records[record_id]
        assert entry["status"] == "dropped" and entry["stage"] == "internal"
        assert entry["rule"] == "Injected"
        assert entry["reason"] == f"Injected while in stage {stage}: injected failure"
    assert out.exists() and run.report_path.exists() and run.report_path.with_suffix(".md").exists()
    assert run.report["counts"]["dropped_by_stage"].get("internal") == len(reached)


def test_a_failing_importer_is_a_problem_not_the_end_of_the_run(
    executor, source, tmp_path, monkeypatch
):
    def broken(path, *, name):
        raise Injected("cannot read")

    monkeypatch.setattr(importers.FORMATS["jsonl"], "load_file", broken)
    # no record could be read, so no task is kept: an error naming the file, and the
    # importer's failure is in the report as a problem, not a traceback
    with pytest.raises(SqlgoldError, match="no task kept"):
        curate_to_files(source, "jsonl", executor, out=tmp_path / "tiny_tasks.jsonl")
    report = json.loads((tmp_path / "tiny_report.json").read_text(encoding="utf-8"))
    assert report["problems"] == [
        {
            "reason": "internal",
            "message": "Injected: cannot read",
            "path": str(source),
            "line": None,
        }
    ]


def test_a_database_gone_is_no_records_drop_but_the_runs_error(
    executor, source, tmp_path, monkeypatch
):
    """A database that went away (a Spark server whose SparkContext stopped) would fail
    every record after it: the run ends with that error, and writes no task file."""

    def gone(*args, **kwargs):
        raise DatabaseError("the Spark server stopped answering", path="sc://cdm:15002")

    monkeypatch.setattr(pipeline, "run_gold", gone)
    out = tmp_path / "tiny_tasks.jsonl"
    with pytest.raises(DatabaseError, match="stopped answering"):
        curate_to_files(source, "jsonl", executor, out=out)
    assert not out.exists()
