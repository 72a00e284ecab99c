"""The shipped benchmark on PostgreSQL: every gold transpiled from DuckDB gives the same
result hash as on DuckDB, and the reference answers (DuckDB SQL, ``--dialect duckdb``)
score as they do on DuckDB."""

from __future__ import annotations

import json

import pytest

from score.comparison.result_hash import result_sha256
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError
from score.scoring.gold_cache import GoldCache
from score.scoring.run import ScoringOptions, run_scoring
from tests.paths import REPO

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


def _tasks() -> list[dict]:
    from score.inputs.task_set import load_tasks

    return load_tasks(PROJECT_TASKS)


@pytest.fixture(scope="module")
def pg_scoring(pg_cdm, tmp_path_factory):
    """The reference answers scored on PostgreSQL, predictions transpiled from DuckDB."""
    root = tmp_path_factory.mktemp("pg_scoring")
    lines = []
    for t in _tasks():
        for lang in sorted(t["questions"]):
            out = f"```sql\n{t['answer_sql']}\n```" if t["answerable"] else "ABSTAIN"
            lines.append({"task_id": t["id"], "language": lang, "run": "reference", "output": out})
    preds = root / "reference.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    cache = root / "cache"
    settings = ExecutorSettings(timeout_seconds=30)
    with Executor(pg_cdm.reader_url, settings=settings) as ex:
        outcome = run_scoring(
            PROJECT_TASKS,
            preds,
            root / "run",
            ex,
            ScoringOptions(cache_dir=cache, dialect="duckdb"),
        )
        golds = GoldCache(cache, ex)
        pg_golds = {t["id"]: golds.result(t["gold_sql"]) for t in _tasks() if t.get("gold_sql")}
        executions = golds.executions
    return outcome, pg_golds, executions, root / "run"


def test_reference_answers_score_on_postgres(pg_scoring):
    outcome, _, _, run = pg_scoring
    summary = outcome.summary
    assert summary["ex"] >= 0.95
    assert summary["ex"] == 1.0  # measured: every reference answer agrees with its gold
    meta = json.loads((run / "run.json").read_text())
    assert meta["engine"] == "postgresql" and meta["prediction_dialect"] == "duckdb"
    assert "sqlgold_reader:***@" in meta["database"]


def test_every_gold_gives_the_same_result_hash_on_both_engines(pg_scoring, executor):
    _, pg_golds, executions, _ = pg_scoring
    assert executions == 0  # served from the scoring run's gold cache
    differ = []
    for task in _tasks():
        gold = task.get("gold_sql")
        if not gold:
            continue
        duck, pg = executor.execute(gold), pg_golds[task["id"]]
        assert not isinstance(pg, QueryError), (task["id"], pg)
        ordered = bool(task.get("order_matters"))
        if result_sha256(duck, ordered=ordered) != result_sha256(pg, ordered=ordered):
            differ.append(task["id"])
    assert differ == []
    assert len(pg_golds) >= 250
