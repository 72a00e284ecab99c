"""Whether a task's reference answer returns its gold's result on a suite's variant: a
task whose two differ there has one of them wrong (suite build drops it, and its answers
are judged where the two agree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.comparison.compare import compare
from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult
from score.suite.query_runs import error_text, run_many, same_result, today_of
from score.suite.same_golds import gold_key, same_golds


def references_differ(
    ex: Executor,
    tasks: Sequence[Mapping[str, Any]],
    by_task: Mapping[str, QueryResult],
    candidate: str,
    profile: str,
    jobs: int,
) -> dict[str, str]:
    """The tasks whose reference answer's result here is not their gold's, with why
    (``by_task``: the gold results, by the id of the first task asking each gold)."""
    first = {key: asking[0]["id"] for key, asking in same_golds(tasks).items()}
    with_answer = [t for t in tasks if t.get("answer_sql")]
    # a reference answer several tasks share (one gold asked in several wordings) runs once
    queries = list(dict.fromkeys((t["answer_sql"], today_of(t)) for t in with_answer))
    results = dict(zip(queries, run_many(ex, queries, jobs), strict=True))
    differ = {}
    for task in with_answer:
        answer = results[(task["answer_sql"], today_of(task))]
        gold = by_task[first[gold_key(task)]]
        if not same_result(task, gold, answer, profile):
            what = (
                error_text(answer)
                if isinstance(answer, QueryError)
                else f"{answer.num_rows} row(s) where the gold returns {gold.num_rows}: "
                + _why(task, gold, answer, profile)
            )
            differ[task["id"]] = (
                f"gold and reference answer differ on variant {candidate}: the reference "
                f"answer gives {what}"
            )
    return differ


def _why(task: Mapping[str, Any], gold: QueryResult, answer: QueryResult, profile: str) -> str:
    """The comparator's reason two results differ (``2 gold row(s) not in ...``)."""
    try:
        return compare(gold, answer, profile, order_matters=task["order_matters"]).reason
    except Exception as e:  # noqa: BLE001 - the comparator could not judge them
        return f"the comparator could not compare them ({type(e).__name__})"
