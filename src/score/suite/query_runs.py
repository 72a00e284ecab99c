"""Where suite build runs its queries: golds and neighbours guarded once by the
executor, then run as guarded text on the base database, in the trial database or on a
written variant, with the comparator and order rule of their task."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from score.comparison.compare import compare
from score.execution.executor import Executor, PreparedQuery
from score.execution.result import QueryError, QueryResult
from score.scoring.variant_order import order_is_open
from score.suite.distill import Distillation, NeighbourKey
from score.suite.neighbours import Neighbour
from score.suite.trial_database import TrialDatabase

#: runs guarded queries somewhere (the trial database or an executor), in order
Runner = Callable[[Sequence[PreparedQuery]], list[QueryResult | QueryError]]


@dataclass
class SuiteTask:
    """A task as the build sees it: its gold's base result, its neighbours, which ran
    and which returned the gold's result on the base database."""

    task: Mapping[str, Any]
    gold_base: QueryResult
    neighbours: list[Neighbour]
    ran_on_base: list[int]  # indexes of neighbours that ran on the base database
    alive: set[int]  # ... and returned the gold's result there
    gold_query: PreparedQuery | None = None
    queries: dict[int, PreparedQuery] = field(default_factory=dict)  # neighbour -> guarded
    rows_on_variants: list[int] = field(default_factory=list)  # the gold's, per kept variant


def today_of(task: Mapping[str, Any]) -> dt.date | None:
    return dt.date.fromisoformat(task["today"]) if task.get("today") else None


def run_many(
    executor: Executor, items: Sequence[tuple[str, dt.date | None]], jobs: int
) -> list[QueryResult | QueryError]:
    """Run each (sql, today), guarded, in order; a failure is returned, not raised."""
    return _map(lambda item: executor.try_execute(item[0], today=item[1]), items, jobs)


def prepare_many(
    executor: Executor, items: Sequence[tuple[str, dt.date | None]], jobs: int
) -> list[PreparedQuery | QueryError]:
    """Guard each (sql, today) once: the guarded text runs on every candidate as is."""

    def one(item: tuple[str, dt.date | None]) -> PreparedQuery | QueryError:
        try:
            return executor.prepare(item[0], today=item[1])
        except QueryError as e:
            return e

    return _map(one, items, jobs)


def run_prepared(
    executor: Executor, items: Sequence[PreparedQuery], jobs: int
) -> list[QueryResult | QueryError]:
    def one(query: PreparedQuery) -> QueryResult | QueryError:
        try:
            return executor.run(query)
        except QueryError as e:
            return e

    return _map(one, items, jobs)


def _map(f: Callable[[Any], Any], items: Sequence[Any], jobs: int) -> list[Any]:
    if jobs <= 1 or len(items) < 2:
        return [f(item) for item in items]
    with ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(f, items))


def same_result(task: Mapping[str, Any], gold: QueryResult, other: Any, profile: str) -> bool:
    if not isinstance(other, QueryResult):
        return False
    try:
        return compare(gold, other, profile, order_matters=task["order_matters"]).match
    except Exception:  # noqa: BLE001 - a value the comparator cannot handle: told apart
        return False


def error_text(e: QueryError) -> str:
    return f"{e.kind}: {str(e).splitlines()[0][:200]}"


def on_trial(trial: TrialDatabase) -> Runner:
    return lambda queries: [trial.run(q.sql) for q in queries]


def on_executor(ex: Executor, jobs: int) -> Runner:
    return lambda queries: run_prepared(ex, queries, jobs)


def open_orders(
    ex: Executor, found: Mapping[str, SuiteTask], by_task: Mapping[str, QueryResult]
) -> Callable[[str], bool]:
    """:func:`told_apart`'s ``open_order`` on the database ``ex`` opens: whether a task's
    gold leaves rows tied on its ORDER BY there (:func:`order_is_open`), asked once per
    task, and only for a task with a near miss that differs."""
    opened: dict[str, bool] = {}

    def open_order(tid: str) -> bool:
        if tid not in opened:
            task = found[tid].task
            columns = len(by_task[tid].columns)
            opened[tid] = order_is_open(task["gold_sql"], columns, ex, today_of(task))
        return opened[tid]

    return open_order


def told_apart(
    run: Runner,
    keys: Sequence[NeighbourKey],
    found: Mapping[str, SuiteTask],
    by_task: Mapping[str, QueryResult],
    profile: str,
    open_order: Callable[[str], bool] | None = None,
) -> list[NeighbourKey]:
    """The neighbours among ``keys`` whose result differs from their gold's here.

    ``open_order(task_id)``: whether the gold's ORDER BY leaves rows tied here; a
    neighbour that differs only in the order of such rows is not told apart, as scoring
    with the suite judges it (:func:`score.scoring.variant_pass.settle_order`)."""
    results = run([found[t].queries[k] for t, k in keys])
    out = []
    for key, r in zip(keys, results, strict=True):
        task, gold = found[key[0]].task, by_task[key[0]]
        if same_result(task, gold, r, profile):
            continue
        if (
            open_order is not None
            and task["order_matters"]
            and isinstance(r, QueryResult)
            and _same_rows(gold, r, profile)
            and open_order(task["id"])
        ):
            continue
        out.append(key)
    return out


def _same_rows(gold: QueryResult, other: QueryResult, profile: str) -> bool:
    try:
        return compare(gold, other, profile, order_matters=False).match
    except Exception:  # noqa: BLE001 - a value the comparator cannot handle: told apart
        return False


def golds_run(
    run: Runner,
    items: Sequence[SuiteTask],
    by_task: dict[str, QueryResult],
    candidate: str,
    gold_failures: dict[str, list[str]],
    distillation: Distillation,
) -> bool:
    """Run ``items``' golds on the candidate into ``by_task``; False (the candidate
    rejected, each failing gold noted) if any fails."""
    golds = run([i.gold_query for i in items])  # type: ignore[misc]
    ok = True
    for item, gold in zip(items, golds, strict=True):
        if isinstance(gold, QueryError):
            gold_failures.setdefault(item.task["id"], []).append(f"{candidate}: {error_text(gold)}")
            ok = False
        else:
            by_task[item.task["id"]] = gold
    if not ok:
        distillation.reject(candidate, "a gold fails on it")
    return ok
