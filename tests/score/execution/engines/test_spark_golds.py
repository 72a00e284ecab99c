"""The shipped tasks on Spark: golds give DuckDB's results, reference answers score.

A deterministic subset (every 12th answerable task, 21) keeps the suite fast on a
small machine; ``bench/bench_spark.py`` and the survey in the README cover all tasks.
Named engine differences are reference answers that Spark SQL cannot run as DuckDB
does; the golds themselves all agree.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from score.comparison.compare import compare
from score.execution.executor import Executor
from score.execution.result import QueryError
from tests.paths import REPO

TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"

#: Reference answers Spark cannot run as DuckDB does, and why.
ENGINE_DIFFERENCES = {
    "omop-019": "Spark refuses a correlated scalar subquery over a GROUP BY key",
    "omop-110": "Spark refuses a correlated scalar subquery over a GROUP BY key",
    "omop-124": "Spark refuses a correlated scalar subquery over a GROUP BY key",
    "omop-038": "a LATERAL join with ORDER BY ... LIMIT 1 per row runs past the time limit",
}


def _subset() -> list[dict]:
    from score.inputs.task_set import load_tasks

    tasks = load_tasks(TASKS)
    answerable = [t for t in tasks if t["answerable"]]
    return answerable[::12]


@pytest.fixture(scope="module")
def outcomes(spark_executor: Executor, executor: Executor):
    def one(task: dict):
        gold = executor.execute(task["gold_sql"])
        on_spark = spark_executor.try_execute(task["gold_sql"])
        answer = spark_executor.try_execute(task["answer_sql"] or task["gold_sql"])
        flags = {"order_matters": task.get("order_matters", False)}
        same = not isinstance(on_spark, QueryError) and compare(gold, on_spark, **flags).match
        ex = not isinstance(answer, QueryError) and compare(gold, answer, **flags).match
        return task["id"], same, ex, on_spark

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(one, _subset()))


def test_golds_give_duckdb_results_on_spark(outcomes):
    assert len(outcomes) >= 20
    differ = {tid: repr(r)[:200] for tid, same, _, r in outcomes if not same}
    assert differ == {}


def test_reference_answers_score_on_spark(outcomes):
    correct = sum(ex for _, _, ex, _ in outcomes)
    wrong = {tid for tid, _, ex, _ in outcomes if not ex}
    assert wrong <= set(ENGINE_DIFFERENCES), wrong - set(ENGINE_DIFFERENCES)
    assert correct / len(outcomes) >= 0.95
