"""Measuring efficiency (``score run --efficiency``): right answers timed against their
golds, or their plans' estimated costs compared, in the query processes.

Only the executor runs SQL: each instance is one request handled in a sandboxed query
process (:mod:`score.execution.processes.messages` shows the pattern), under the query
time limit, which covers all of its runs:

* :class:`TimePair` guards both queries once (the gold as the task pins it, the
  prediction as it was scored), then runs them N times, the prediction first and the gold
  second in every round, each run's wall time the engine's run of the query with its
  result fetched;
* :class:`PlanCosts` guards both and asks the engine for each plan's estimated cost
  (:mod:`score.execution.engines.plan_cost`; DuckDB and PostgreSQL).

:func:`measure_efficiency` goes through a finished run's right answers one at a time,
after scoring (so no other query of the run competes with the timings), records each
instance's ratio (or why it could not be measured: it then scores 0, as a timeout or an
error does in BIRD) and returns the summary (:mod:`score.statistics.efficiency`).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from score.errors import ScoringError
from score.execution.executor import Executor
from score.execution.processes.messages import Session
from score.execution.result import QueryError
from score.scoring.gold_cache import GOLD_DIALECT
from score.scoring.gold_pin import task_today
from score.scoring.outcomes import EXCLUDED, Outcome
from score.statistics.efficiency import DEFAULT_RUNS, METHODS, efficiency_summary, instance_ratio

#: A plan cost below this is read as this (one row for DuckDB, one page read's cost for
#: PostgreSQL), so a plan with no estimate, or a trivial one, does not make a ratio explode.
COST_FLOOR = 1.0

#: How far past what is left of the time limit the rounds still to time must project
#: before they are stopped early (:func:`_stop_if_past_the_limit`).
PAST_THE_LIMIT = 2.0

#: Engines whose plans give a cost estimate sqlgold reads.
COST_ENGINES = ("duckdb", "postgresql")


@dataclass(frozen=True)
class TimePair:
    """Time the prediction and its gold ``runs`` times each, alternating, in one query
    process; the gold's and the prediction's run times in seconds."""

    gold_sql: str
    pred_sql: str
    runs: int
    gold_dialect: str | None = None
    pred_dialect: str | None = None
    today: dt.date | None = None
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> tuple[tuple[float, ...], tuple[float, ...]]:
        gold = session.prepare(self.gold_sql, self.gold_dialect, today=self.today).sql
        pred = session.prepare(self.pred_sql, self.pred_dialect, today=self.today).sql
        gold_times: list[float] = []
        pred_times: list[float] = []
        for done in range(1, self.runs + 1):
            pred_times.append(_timed(session, pred))
            gold_times.append(_timed(session, gold))
            _stop_if_past_the_limit(session, done, self.runs, sum(pred_times) + sum(gold_times))
        return tuple(gold_times), tuple(pred_times)


def _stop_if_past_the_limit(session: Session, done: int, runs: int, spent: float) -> None:
    """Stop the rounds as soon as the ones left would take, at the pace of those done,
    more than :data:`PAST_THE_LIMIT` times what is left of the time limit: the answer
    times out either way (a margin, since a first round pays for cold caches), and a
    prediction built to be timed many times (right, and near the limit) costs a round or
    two, not the whole limit."""
    if session.deadline is None or done >= runs:
        return
    needed = spent / done * (runs - done)
    left = session.deadline - time.monotonic()
    if needed > PAST_THE_LIMIT * left:
        limit = session.settings.timeout_seconds
        raise QueryError(
            "timeout",
            f"{runs} timed rounds would take about {spent / done * runs:.1f} s, past the time "
            f"limit of {limit:g} s (stopped after {done})",
        )


def _timed(session: Session, sql: str) -> float:
    """Seconds one run of already-checked ``sql`` takes, its result fetched."""
    start = time.perf_counter()
    session.run(sql, check=False)  # the engine's check was done once, by prepare
    return time.perf_counter() - start


@dataclass(frozen=True)
class PlanCosts:
    """The engine's estimated cost of the gold's plan and of the prediction's."""

    gold_sql: str
    pred_sql: str
    gold_dialect: str | None = None
    pred_dialect: str | None = None
    today: dt.date | None = None
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> tuple[float, float]:
        cost = getattr(session.engine, "plan_cost", None)
        if cost is None:
            raise QueryError("runtime_error", f"{session.engine.name} gives no plan cost")
        gold = session.prepare(self.gold_sql, self.gold_dialect, today=self.today).sql
        pred = session.prepare(self.pred_sql, self.pred_dialect, today=self.today).sql
        limits = session.limits()
        return float(cost(gold, limits)), float(cost(pred, limits))


def check_method(method: str, runs: int | None, engine: str) -> int:
    """The runs per instance for ``method`` (its default when ``runs`` is None); a
    ScoringError for an unknown method, runs below 1, or a cost on an engine without one."""
    if method not in METHODS:
        raise ScoringError(f"unknown efficiency measure {method!r} (known: {', '.join(METHODS)})")
    if runs is not None and runs < 1:
        raise ScoringError(f"--efficiency-runs must be at least 1, not {runs}")
    if method == "cost" and engine not in COST_ENGINES:
        raise ScoringError(
            f"--efficiency cost: {engine} gives no plan cost sqlgold reads "
            f"({', '.join(COST_ENGINES)} do); use ves or rves"
        )
    return DEFAULT_RUNS[method] if runs is None else runs


def measure_efficiency(
    records: list[dict[str, Any]],
    tasks: Mapping[str, Mapping[str, Any]],
    executor: Executor,
    method: str,
    runs: int,
    *,
    dialect: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, Any]:
    """Measure every right answer of ``records`` (task id -> task in ``tasks``), write
    each one's ``efficiency`` into its record, and return the run's summary.

    ``dialect`` is the predictions' SQL dialect when not the engine's own.  The
    denominator is EX's: answerable instances not left out (``gold_error``,
    ``gold_drift``); wrong answers add 0.
    """
    check_method(method, runs, executor.engine)
    right = [r for r in records if r["outcome"] == Outcome.CORRECT and r["answerable"]]
    ratios: list[float | None] = []
    for done, record in enumerate(right, start=1):
        record["efficiency"] = _measure(
            record, tasks[record["task_id"]], executor, method, runs, dialect
        )
        ratios.append(record["efficiency"].get("ratio"))
        if progress:
            progress(done, len(right))
    denominator = sum(1 for r in records if r["answerable"] and r["outcome"] not in EXCLUDED)
    return efficiency_summary(ratios, denominator, method, runs)


def _measure(
    record: Mapping[str, Any],
    task: Mapping[str, Any],
    executor: Executor,
    method: str,
    runs: int,
    dialect: str | None,
) -> dict[str, Any]:
    """One right answer's ratio (gold over prediction), or why it has none."""
    if not record.get("sql"):
        return {"ratio": None, "error": "no SQL to measure (the answer was a result CSV)"}
    common = {
        "gold_sql": task["gold_sql"],
        "pred_sql": record["sql"],
        "gold_dialect": GOLD_DIALECT,
        "pred_dialect": dialect,
        "today": task_today(task),
    }
    try:
        if method == "cost":
            gold_cost, pred_cost = executor.call(PlanCosts(**common))
            ratio = max(gold_cost, COST_FLOOR) / max(pred_cost, COST_FLOOR)
            return {"ratio": ratio, "gold_cost": gold_cost, "pred_cost": pred_cost}
        gold_times, pred_times = executor.call(TimePair(runs=runs, **common))
    except QueryError as e:
        return {"ratio": None, "error": f"{e.kind}: {e.message}"}
    return {
        "ratio": instance_ratio(gold_times, pred_times),
        "gold_seconds": round(sum(gold_times) / len(gold_times), 6),
        "pred_seconds": round(sum(pred_times) / len(pred_times), 6),
    }
