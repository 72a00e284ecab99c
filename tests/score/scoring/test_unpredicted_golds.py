"""A gold is run only for an instance that needs its result: a task no prediction
answers never runs its gold, under --no-cache too, and the priors compare with each
task's pinned result instead of running golds."""

from __future__ import annotations

import json
from pathlib import Path

from score.execution.executor import Executor
from score.inputs.task_set import load_tasks
from score.scoring.gold_cache import GoldCache
from score.scoring.outcomes import Outcome
from score.scoring.pipeline import ScoringContext
from score.scoring.priors import PRIORS, prior_predictions
from score.scoring.run import ScoringOptions, run_scoring
from tests.paths import REPO
from tests.task_factory import make_task, scored_records

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_one_prediction_of_the_benchmark_runs_only_its_gold(omop_db, tmp_path):
    tasks = load_tasks(PROJECT_TASKS)
    task = next(t for t in tasks if t["answerable"])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": task["id"], "sql": task["gold_sql"]}])
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            PROJECT_TASKS,
            preds,
            tmp_path / "run",
            ex,
            ScoringOptions(cache_dir=None, split="all", with_priors=True),
        )
    assert outcome.gold_executions == 1  # its own gold; the 250 others and the priors: none
    counts = outcome.summary["outcomes"]["counts"]
    assert counts[Outcome.CORRECT] == 1
    assert counts[Outcome.MISSING] == outcome.summary["n_instances"] - 1
    priors = json.loads((tmp_path / "run" / "priors.json").read_text())
    select0 = priors[PRIORS["select0"]]["outcomes"]["counts"]
    assert select0[Outcome.MISMATCH] == outcome.summary["n_instances"]  # no gold is SELECT 0


def test_a_prior_decided_from_the_pin_is_the_one_running_the_gold_gives(executor):
    tasks = [
        make_task("zero", "SELECT 0 AS n", expect=((0,),)),
        make_task("zero_twice", "SELECT 0 AS n FROM range(2)", expect=((0,), (0,))),
        make_task("count"),
        make_task("null", "SELECT NULL::INTEGER AS n", expect=((None,),)),
        make_task("none", None),
    ]
    by_pin, by_gold = (
        {
            r["task_id"]: r
            for r in scored_records(
                tasks,
                prior_predictions(tasks, "select0"),
                ScoringContext(
                    executor, GoldCache(None, executor), "sqlgold", "p", gold_from_pin=pin
                ),
            )
        }
        for pin in (True, False)
    )
    assert {k: r["outcome"] for k, r in by_pin.items()} == {
        k: r["outcome"] for k, r in by_gold.items()
    }
    assert by_pin["zero"]["outcome"] == Outcome.CORRECT
    assert by_pin["count"]["outcome"] == Outcome.MISMATCH
    assert "decided from the pin" in by_pin["count"]["reason"]


def test_priors_run_no_gold(executor):
    tasks = [make_task("zero", "SELECT 0 AS n", expect=((0,),)), make_task("count")]
    gold = GoldCache(None, executor)
    ctx = ScoringContext(executor, gold, "sqlgold", "p", gold_from_pin=True)
    records = scored_records(tasks, prior_predictions(tasks, "select0"), ctx)
    assert [r["outcome"] for r in records] == [Outcome.CORRECT, Outcome.MISMATCH]
    assert gold.executions == 0


def test_a_prior_on_a_task_without_a_pin_runs_its_gold(executor):
    task = make_task("unpinned", "SELECT 0 AS n", expect=((0,),))
    task["gold_result"] = None
    gold = GoldCache(None, executor)
    ctx = ScoringContext(executor, gold, "sqlgold", "p", gold_from_pin=True)
    (record,) = scored_records([task], prior_predictions([task], "select0"), ctx)
    assert record["outcome"] == Outcome.CORRECT
    assert gold.executions == 1


def test_text2omop_metrics_run_no_gold_of_an_unanswered_task(omop_db, tmp_path):
    tasks = load_tasks(PROJECT_TASKS)
    task = next(t for t in tasks if t["answerable"])
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": task["id"], "sql": task["gold_sql"]}])
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            PROJECT_TASKS,
            preds,
            tmp_path / "run",
            ex,
            ScoringOptions(cache_dir=None, split="all", with_priors=False, profile="text2omop"),
        )
    assert outcome.gold_executions == 1
    metrics = outcome.summary["text2omop"]
    assert metrics["n_examples"] == outcome.summary["n_instances"]
    # every answerable item's gold counts as running (as it does on this database: the
    # pins stand), though only one ran
    answerable = sum(len(t["questions"]) for t in tasks if t["answerable"])
    assert metrics["actually_answerable"] == answerable
    assert metrics["correct_exec"] == 1
