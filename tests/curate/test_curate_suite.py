"""sqlgold curate --suite: a task the test suite drops (its gold and reference answer
differ, or its gold fails, on a variant) is dropped with rule suite_disagreement and the
suite's reason; a suite built on another database is refused before anything is written."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curate.cli import main
from tests.score.suite.made_suite import SUITE_DROPS

COUNT = "SELECT count(*) AS n FROM cdm.person"


def write_source(path):
    lines = [
        {
            "format": "sqlgold.source/1",
            "id": task_id,
            "question": "How many persons?",
            "gold_sql": COUNT,
            "gold_dialect": "duckdb",
            "answer_sql": "SELECT count(person_id) AS n FROM cdm.person",
            "answer_dialect": "duckdb",
        }
        for task_id in ("s-count", "s-dropped")
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_task_the_suite_drops_is_dropped_with_a_named_rule(omop_db, made_suite, tmp_path):
    source = write_source(tmp_path / "mini.jsonl")
    out = tmp_path / "mini_tasks.jsonl"
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(out), "-q"]
    result = CliRunner().invoke(main, [*args, "--suite", str(made_suite.folder)])
    assert result.exit_code == 0, result.output
    assert "suite/suite_disagreement" in result.stdout
    report = json.loads((tmp_path / "mini_report.json").read_text())
    by_id = {r["id"]: r for r in report["records"]}
    assert by_id["s-count"]["status"] == "kept"
    dropped = by_id["s-dropped"]
    assert (dropped["status"], dropped["stage"], dropped["rule"]) == (
        "dropped",
        "suite",
        "suite_disagreement",
    )
    assert dropped["reason"] == SUITE_DROPS["s-dropped"]
    assert report["settings"]["suite_drops"] == SUITE_DROPS
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()[1:]] == ["s-count"]
    without = CliRunner().invoke(main, [*args, "--out", str(tmp_path / "all.jsonl")])
    assert without.exit_code == 0 and len((tmp_path / "all.jsonl").read_text().splitlines()) == 3


def test_a_suite_built_on_another_database_is_refused_before_any_output(
    changed_db, made_suite, tmp_path
):
    source = write_source(tmp_path / "mini.jsonl")
    out = tmp_path / "mini_tasks.jsonl"
    args = ["curate", str(source), "--db", str(changed_db), "--out", str(out), "-q"]
    result = CliRunner().invoke(main, [*args, "--suite", str(made_suite.folder)])
    assert result.exit_code == 1, result.output
    assert "built on another base database" in result.stderr
    assert not out.exists() and not (tmp_path / "mini_report.json").exists()
