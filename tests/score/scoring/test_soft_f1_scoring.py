"""``score run --profile bird`` carries BIRD mini-dev's soft F1: each answerable
instance's in results.jsonl (0 for an answer with no result) and their mean x100 in
summary.json and report.md; other profiles carry none."""

from __future__ import annotations

import json

import pytest

from score.comparison.result_hash import result_sha256
from score.comparison.soft_f1 import soft_f1_rows
from score.execution.executor import Executor
from score.report.peer_scores import markdown_sections, summary_lines
from score.scoring.run import ScoringOptions, run_scoring
from tests.task_factory import make_task, write_task_file

GOLD = "SELECT gender_concept_id AS g, count(*) AS n FROM cdm.person GROUP BY 1 ORDER BY 1"


def _tasks(omop_db):
    with Executor(omop_db) as ex:
        result = ex.execute(GOLD)
    two = make_task("two", GOLD, order_matters=True)
    two["gold_result"] = {
        "sha256": result_sha256(result, ordered=True),
        "rows": result.num_rows,
        "columns": list(result.columns),
        "types": list(result.types),
    }
    return [make_task("count"), two, make_task("left")], result.rows()


def _run(omop_db, tmp_path, profile):
    tasks, rows = _tasks(omop_db)
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = tmp_path / "preds.jsonl"
    lines = [
        {"task_id": "count", "sql": "SELECT count(*) AS n FROM cdm.person"},
        # the first gender's row right, the second's count wrong
        {
            "task_id": "two",
            "sql": GOLD.replace("count(*)", "count(*) + (gender_concept_id > 8507)::INT"),
        },
        {"task_id": "left", "sql": "SELECT nope FROM cdm.person"},
    ]
    preds.write_text("".join(json.dumps(p) + "\n" for p in lines))
    out = tmp_path / profile
    with Executor(omop_db) as ex:
        run_scoring(
            tasks_path,
            preds,
            out,
            ex,
            ScoringOptions(profile=profile, cache_dir=None, split="all", with_priors=False),
        )
    records = {
        r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    summary = json.loads((out / "summary.json").read_text())
    return records, summary, rows, out


def test_bird_profile_scores_soft_f1_per_instance_and_for_the_run(omop_db, tmp_path):
    records, summary, rows, out = _run(omop_db, tmp_path, "bird")
    wrong = [rows[0], (rows[1][0], rows[1][1] + 1)]
    expected_two = soft_f1_rows(rows, wrong)
    assert 0 < expected_two < 1
    assert records["count"]["soft_f1"] == 1.0
    assert records["two"]["soft_f1"] == pytest.approx(expected_two)
    assert records["left"]["soft_f1"] == 0.0  # its answer failed: BIRD's 0
    assert summary["soft_f1"] == {
        "value": pytest.approx(100 * (1.0 + expected_two + 0.0) / 3),
        "instances": 3,
    }
    assert "## Soft F1" in markdown_sections([summary])
    assert any(line.startswith("Soft F1") for line in summary_lines(summary))


def test_other_profiles_carry_no_soft_f1(omop_db, tmp_path):
    records, summary, _, _ = _run(omop_db, tmp_path, "sqlgold")
    assert "soft_f1" not in summary
    assert all("soft_f1" not in r for r in records.values())
