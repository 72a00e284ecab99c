"""Scoring: every instance of a task set gets exactly one outcome, with its reason.

The scorer is a plain function of tasks, predictions, an executor and a comparator
profile; the CLI is a thin layer over it, and a notebook can call it the same way:

    tasks = load_tasks("data/benchmark/omop_tasks.jsonl")
    preds = read_predictions("preds.jsonl", tasks)
    with Executor("data/omop/synthea1k.duckdb") as ex:
        records = list(score_predictions(tasks, preds.by_key, ex, run=preds.run))

For each instance (a task in one language), in pipeline order:

missing (no prediction) -> generation_error (the generator said so) -> extraction
(abstained, cut_off, format_failure, or SQL) -> for an unanswerable task any answer is
wrong -> gold result (cached; a failing gold is ``gold_error``, one that is not the
result its task pinned is ``gold_drift``) -> the prediction runs through the sandboxed
executor (a failure maps to parse/build/render/execute error, or to ``cut_off`` when the
generator said the output was cut off) -> the comparator profile decides correct or
mismatch.  Gold and prediction run under the fixed today the task was verified under.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from . import outcomes as oc
from .compare import compare
from .executor import Executor
from .extract import ABSTAIN, CUT_OFF, FORMAT_FAILURE, extract
from .gold_cache import GoldCache
from .gold_pin import GoldPins, task_today
from .guard import check_statement
from .predictions import Prediction, load_relation_csv
from .profiles.logical_form import logical_form_match, normalise_sql, normalise_tree
from .result import QueryError, QueryResult
from .tasks import Instance, instances


@dataclass(frozen=True)
class ScoringContext:
    """What every instance is scored with."""

    executor: Executor
    gold: GoldCache
    profile: str = "sqlgold"
    run: str = "run"
    pins: GoldPins = field(default_factory=GoldPins)


def _base_record(instance: Instance, run: str, prediction: Prediction | None) -> dict[str, Any]:
    task = instance.task
    return {
        "task_id": instance.task_id,
        "language": instance.language,
        "run": run,
        "tier": task["tier"],
        "category": task.get("category"),
        "difficulty": task.get("difficulty"),
        "answerable": task["answerable"],
        "outcome": None,
        "reason": "",
        "sql": None,
        "executed_sql": None,
        "lf_match": None,
        "output": prediction.output if prediction else None,
        "context": prediction.context if prediction else None,
        "prediction_line": prediction.line if prediction else None,
        "timings": {},
    }


def score_instance(
    instance: Instance, prediction: Prediction | None, ctx: ScoringContext
) -> dict[str, Any]:
    """The outcome record of one instance."""
    start = time.perf_counter()
    record = _base_record(instance, ctx.run, prediction)
    try:
        _decide(instance, prediction, ctx, record)
    finally:
        record["timings"]["total_s"] = round(time.perf_counter() - start, 6)
    return record


def _set(record: dict[str, Any], outcome: str, reason: str) -> None:
    record["outcome"] = outcome
    record["reason"] = reason


def _decide(
    instance: Instance, prediction: Prediction | None, ctx: ScoringContext, record: dict
) -> None:
    task = instance.task
    if prediction is None:
        return _set(record, oc.MISSING, "no prediction for this instance")
    if prediction.status == "generation_error":
        return _set(
            record, oc.GENERATION_ERROR, "the generator reported that the model call failed"
        )
    if prediction.kind == "csv":
        return _decide_relation(task, prediction, ctx, record)
    if prediction.kind == "sql":
        if prediction.sql is None or prediction.sql.strip().lower() == "null":
            return _set(record, oc.ABSTAINED, "the answer is null")
        sql = prediction.sql
    else:
        extraction = extract(prediction.output, prediction.status)
        if extraction.kind == ABSTAIN:
            return _set(record, oc.ABSTAINED, extraction.reason)
        if extraction.kind == CUT_OFF:
            return _set(record, oc.CUT_OFF, extraction.reason)
        if extraction.kind == FORMAT_FAILURE:
            return _set(record, oc.FORMAT_FAILURE, extraction.reason)
        sql = extraction.sql
    record["sql"] = sql
    try:
        prepared = ctx.executor.prepare(sql, today=task_today(task))
    except QueryError as e:
        _logical_form(task, sql, record)
        return _failed(record, e, prediction)
    _logical_form(task, sql, record)
    record["executed_sql"] = prepared.sql
    try:
        predicted = ctx.executor.run(prepared)
    except QueryError as e:
        return _failed(record, e, prediction)
    record["timings"]["execute_s"] = round(predicted.seconds, 6)
    if not task["answerable"]:
        return _set(record, oc.MISMATCH, "the question is unanswerable here; expected ABSTAIN")
    _compare_with_gold(task, predicted, ctx, record)


def _failed(record: dict, error: QueryError, prediction: Prediction) -> None:
    """A prediction whose query failed: the error's outcome, or ``cut_off`` when the
    generator said the output hit its limit (the query is then cut short, not wrong)."""
    if prediction.status == "cut_off":
        return _set(
            record,
            oc.CUT_OFF,
            f"the output hit its limit inside the query ({error.kind}: {error.message})",
        )
    return _set(record, oc.outcome_for_error(error.kind), error.message)


def _logical_form(task: dict, sql: str, record: dict) -> None:
    """Seed 003's logical-form match, reusing the guard's parse of ``sql`` when it has one."""
    if not (task["answerable"] and task["gold_sql"]):
        return
    try:
        tree = check_statement(sql)  # cached: prepare() has just parsed this text
    except QueryError:
        record["lf_match"] = logical_form_match(task["gold_sql"], sql)
        return
    record["lf_match"] = normalise_sql(task["gold_sql"]) == normalise_tree(tree)


def _decide_relation(task: dict, prediction: Prediction, ctx: ScoringContext, record: dict) -> None:
    if prediction.csv is None:
        return _set(record, oc.EXECUTE_ERROR, "terminal failure (null in the index)")
    predicted = load_relation_csv(prediction.csv)
    if not task["answerable"]:
        return _set(record, oc.MISMATCH, "the question is unanswerable here; expected ABSTAIN")
    _compare_with_gold(task, predicted, ctx, record)


def _compare_with_gold(
    task: dict, predicted: QueryResult, ctx: ScoringContext, record: dict
) -> None:
    today = task_today(task)
    gold = ctx.gold.result(task["gold_sql"], today=today)
    if isinstance(gold, QueryError):
        return _set(record, oc.GOLD_ERROR, f"the gold failed: {gold.kind}: {gold.message}")
    drift = ctx.pins.drift(task, gold, ctx.gold.key(task["gold_sql"], today))
    if drift is not None:
        return _set(record, oc.GOLD_DRIFT, drift)
    start = time.perf_counter()
    verdict = compare(gold, predicted, ctx.profile, order_matters=task["order_matters"])
    record["timings"]["compare_s"] = round(time.perf_counter() - start, 6)
    _set(record, oc.CORRECT if verdict.match else oc.MISMATCH, verdict.reason)


def score_predictions(
    tasks: Iterable[dict[str, Any]],
    predictions: Mapping[tuple[str, str], Prediction],
    ctx: ScoringContext,
    *,
    skip: frozenset[tuple[str, str]] = frozenset(),
    jobs: int = 1,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Score every instance of ``tasks`` not in ``skip``, yielding records as they finish.

    The denominator is the whole task set: instances without a prediction are yielded
    as ``missing``.  With ``jobs`` > 1 instances run on that many threads (DuckDB runs
    queries without holding the GIL); records then arrive in completion order.
    """
    todo = [i for i in instances(tasks) if i.key not in skip]

    def one(instance: Instance) -> dict[str, Any]:
        return score_instance(instance, predictions.get(instance.key), ctx)

    if jobs <= 1:
        for instance in todo:
            record = one(instance)
            if on_record:
                on_record(record)
            yield record
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for record in pool.map(one, todo):
            if on_record:
                on_record(record)
            yield record


def prior_predictions(
    tasks: Iterable[dict[str, Any]], kind: str
) -> dict[tuple[str, str], Prediction]:
    """Seed 004's input-blind priors as ordinary predictions for every instance:
    ``abstain`` answers ABSTAIN, ``select0`` answers ``SELECT 0``."""
    if kind not in PRIORS:
        raise ValueError(f"unknown prior {kind!r}; known: {', '.join(PRIORS)}")
    made = {}
    for instance in instances(tasks):
        if kind == "abstain":
            made[instance.key] = Prediction(
                instance.task_id, instance.language, PRIORS[kind], output="ABSTAIN"
            )
        else:
            made[instance.key] = Prediction(
                instance.task_id, instance.language, PRIORS[kind], sql="SELECT 0", kind="sql"
            )
    return made


PRIORS = {"abstain": "prior/abstain-all", "select0": "prior/select-0"}
