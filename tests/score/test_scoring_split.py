"""score run --split: scoring one side of the leakage-aware split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.errors import ScoringError
from score.executor import Executor
from score.run_dir import read_run
from score.runner import run_scoring
from score.split import split_tasks
from tests.task_factory import make_task


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture
def tasks_file(tmp_path):
    tasks = [make_task(f"t{i}") for i in range(6)]
    return write_jsonl(tmp_path / "tasks.jsonl", tasks), tasks


def test_only_the_chosen_side_is_scored(tasks_file, omop_db, tmp_path):
    path, tasks = tasks_file
    test = split_tasks(tasks, test_fraction=0.5, seed=3)["test"]
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"task_id": t["id"], "sql": "SELECT count(*) AS n FROM cdm.person"} for t in test],
    )
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            path, preds, tmp_path / "run", ex, cache_dir=None, resamples=20,
            split="test", test_fraction=0.5, split_seed=3,
        )  # fmt: skip
        assert outcome.summary["n_instances"] == len(test) and outcome.summary["ex"] == 1.0
        assert outcome.summary["meta"]["split"] == {"side": "test", "test_fraction": 0.5, "seed": 3}
        run = read_run(tmp_path / "run")
        assert {r["task_id"] for r in run["records"]} == {t["id"] for t in test}
        # the whole task set counts the other side missing
        whole = run_scoring(path, preds, tmp_path / "all", ex, cache_dir=None, resamples=20)
        assert whole.summary["n_instances"] == len(tasks) and whole.summary["ex"] == 0.5
        # a resumed run must select the same side
        with pytest.raises(ScoringError, match="split changed"):
            run_scoring(path, preds, tmp_path / "run", ex, cache_dir=None, resume=True)
        with pytest.raises(ScoringError, match="holds no tasks"):
            run_scoring(
                path, preds, tmp_path / "none", ex, cache_dir=None, split="test", test_fraction=0.0
            )
