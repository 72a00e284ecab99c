"""One pass over one variant of a test suite: each prediction still to judge runs there
and its result is compared with its gold's (:mod:`score.scoring.suite_phase` makes one
pass per variant, the next variant's executor opened while this one is used).

With ``jobs`` > 1 that many predictions run at once, each in its own query process.
With one job the gold results come first (from the cache, else run), then the
predictions are shared among ``lanes`` query processes (every ``lanes``-th to one), each
fed through a :class:`~score.execution.executor.QueryStream`: each prediction is sent
before the previous result is read, so a query process goes from one to the next while
this process compares.  Which process ran a prediction changes nothing of its verdict.
A prediction stopped at the time limit or by its memory runs once more, alone, in a
fresh process (it may have lost to the machine, not to its own cost).

A variant has few distinct values per column, so a gold whose order matters may rank
rows there that tie on every key of its ORDER BY; those rows may come in any order, in
the gold's result and in a right answer's alike.  A prediction that differs from its gold
only in the order of its rows is therefore judged again: if the gold, run with every
output column appended to its ORDER BY ascending and then descending, gives two
different results, its order is not total on that variant, and the prediction matches
(:func:`settle_order`).
"""

from __future__ import annotations

import datetime as dt
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from score.comparison.compare import compare
from score.execution.executor import Executor, QueryStream
from score.execution.processes.messages import Execute
from score.execution.result import QueryError, QueryResult
from score.scoring.answer import RunAnswer
from score.scoring.decision import describe
from score.scoring.gold_cache import RETRIED_KINDS, GoldCache
from score.scoring.gold_pin import task_today
from score.scoring.variant_order import order_is_open

#: Predictions sent to the query process beyond the one it runs (one job).
SENT_AHEAD = 2


@dataclass(frozen=True)
class Check:
    """A prediction to judge on a variant: its task, its SQL as written, and the DuckDB
    SQL it became on a DuckDB base database (None: prepare ``sql`` afresh)."""

    task: dict[str, Any]
    sql: str
    executed: str | None = None


@dataclass(frozen=True)
class OnVariant:
    """What one prediction did on one variant: ``same`` (matched), ``differs`` or
    ``gold_failed``, and why."""

    kind: str
    reason: str


def request(check: Check, timeout: float, dialect: str | None) -> RunAnswer | Execute:
    """The query-process request that runs a prediction on a variant.

    The DuckDB SQL a prediction became on a DuckDB base database (past the guard, its
    today pinned) runs as it is: DuckDB's own check still makes sure it is one read-only
    SELECT, on a read-only database with no external access, and the prediction is not
    parsed again on every variant.  Otherwise its SQL is guarded and run afresh,
    translated from ``dialect``."""
    if check.executed is not None:
        return RunAnswer(check.executed, timeout)
    return Execute(check.sql, task_today(check.task), dialect)


def run_one(
    executor: Executor, check: Check, dialect: str | None, *, fresh: bool = False
) -> QueryResult | QueryError:
    """A prediction's result on the variant (blocking), or its error."""
    try:
        found = executor.call(
            request(check, executor.settings.timeout_seconds, dialect), fresh=fresh
        )
    except QueryError as e:  # its query failed, or its process had to be ended or died
        return e
    return found


def judged(
    check: Check, expected: QueryResult | QueryError, got: QueryResult | QueryError, profile: str
) -> OnVariant:
    """The verdict of a prediction's result ``got`` against its gold's ``expected``."""
    if isinstance(expected, QueryError):
        return OnVariant("gold_failed", f"the gold failed: {expected.kind}: {expected.message}")
    if isinstance(got, QueryError):
        return OnVariant("differs", f"the prediction failed: {got.kind}: {got.message}")
    try:
        said = compare(expected, got, profile, order_matters=check.task["order_matters"])
    except Exception as e:  # noqa: BLE001 - a value the comparator cannot handle
        return OnVariant("differs", f"the results could not be compared: {describe(e)}")
    return OnVariant("same" if said.match else "differs", said.reason)


def settle_order(
    check: Check,
    verdict: OnVariant,
    expected: QueryResult | QueryError,
    got: QueryResult | QueryError,
    executor: Executor,
    profile: str,
    open_orders: dict[str, bool],
) -> OnVariant:
    """``verdict``, or ``same`` when the prediction differs from its gold only in the
    order of rows the gold's ORDER BY leaves tied on this variant (``open_orders``:
    the tasks already found open or total on it)."""
    if verdict.kind != "differs" or not check.task["order_matters"]:
        return verdict
    if isinstance(expected, QueryError) or isinstance(got, QueryError):
        return verdict
    try:
        unordered = compare(expected, got, profile, order_matters=False)
    except Exception:  # noqa: BLE001 - judged above already
        return verdict
    if not unordered.match:
        return verdict
    tid = check.task["id"]
    if tid not in open_orders:
        open_orders[tid] = order_is_open(
            check.task["gold_sql"], len(expected.columns), executor, task_today(check.task)
        )
    if not open_orders[tid]:
        return verdict
    return OnVariant(
        "same",
        "the same rows; the gold's ORDER BY leaves rows tied on this variant, in any order",
    )


def _gold(check: Check, gold: GoldCache) -> QueryResult | QueryError:
    today: dt.date | None = task_today(check.task)
    return gold.result(check.task["gold_sql"], today=today)


def _one(
    check: Check, executor: Executor, gold: GoldCache, profile: str, dialect: str | None
) -> OnVariant:
    """One prediction judged on its own (a thread of ``jobs`` > 1)."""
    try:
        expected = _gold(check, gold)
        if isinstance(expected, QueryError):
            return judged(check, expected, expected, profile)
        got = run_one(executor, check, dialect)
        if isinstance(got, QueryError) and got.kind in RETRIED_KINDS:
            got = run_one(executor, check, dialect, fresh=True)
        verdict = judged(check, expected, got, profile)
        return settle_order(check, verdict, expected, got, executor, profile, {})
    except Exception as e:  # noqa: BLE001 - one instance never ends the run
        return OnVariant("differs", f"scoring failed: {describe(e)}")


def variant_pass(
    checks: list[Check],
    executor: Executor,
    gold: GoldCache,
    profile: str,
    dialect: str | None,
    *,
    jobs: int = 1,
    lanes: int = 1,
) -> list[OnVariant]:
    """Each check's verdict on the variant ``executor`` opens, in order (``lanes``: the
    query processes one job shares the predictions among)."""
    if jobs > 1:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            return list(pool.map(lambda c: _one(c, executor, gold, profile, dialect), checks))
    found: dict[int, OnVariant] = {}
    expected: dict[int, QueryResult] = {}
    for i, check in enumerate(checks):  # the golds first: cached, else run (blocking)
        try:
            result = _gold(check, gold)
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            found[i] = OnVariant("differs", f"scoring failed: {describe(e)}")
            continue
        if isinstance(result, QueryError):
            found[i] = judged(check, result, result, profile)
        else:
            expected[i] = result

    def judge(i: int, result: QueryResult | QueryError) -> OnVariant | None:
        if isinstance(result, QueryError) and result.kind in RETRIED_KINDS:
            return None  # run again below, alone
        return judged(checks[i], expected[i], result, profile)

    got = _in_lanes(checks, list(expected), executor, dialect, lanes, judge)
    open_orders: dict[str, bool] = {}
    for i, (result, verdict) in got.items():
        check = checks[i]
        if verdict is None:
            result = run_one(executor, check, dialect, fresh=True)
            verdict = judged(check, expected[i], result, profile)
        found[i] = settle_order(check, verdict, expected[i], result, executor, profile, open_orders)
    return [found[i] for i in range(len(checks))]


#: A prediction's result on the variant, with its verdict (None: to be run again).
Judged = dict[int, tuple[QueryResult | QueryError, OnVariant | None]]


def _in_lanes(
    checks: list[Check],
    order: list[int],
    executor: Executor,
    dialect: str | None,
    lanes: int,
    judge: Callable[[int, QueryResult | QueryError], OnVariant | None],
) -> Judged:
    """The predictions ``order`` names, shared among ``lanes`` query processes (each a
    thread's stream of every ``lanes``-th one), each judged by its thread as it comes."""
    lanes = max(1, min(lanes, len(order)))
    if lanes == 1:
        return _streamed(checks, order, executor, dialect, judge)
    with ThreadPoolExecutor(max_workers=lanes) as pool:
        parts = pool.map(
            lambda lane: _streamed(checks, order[lane::lanes], executor, dialect, judge),
            range(lanes),
        )
        got: Judged = {}
        for part in parts:
            got.update(part)
    return got


def _streamed(
    checks: list[Check],
    order: list[int],
    executor: Executor,
    dialect: str | None,
    judge: Callable[[int, QueryResult | QueryError], OnVariant | None],
) -> Judged:
    """The predictions ``order`` names, run one after the other by one query process,
    each sent while the one before runs, and judged while the next runs."""
    got: Judged = {}
    timeout = executor.settings.timeout_seconds

    def take(j: int) -> None:
        result = _receive(stream)
        got[j] = (result, judge(j, result))

    with executor.stream() as stream:
        sent: deque[int] = deque()
        for i in order:
            stream.send(request(checks[i], timeout, dialect))
            sent.append(i)
            while len(sent) > SENT_AHEAD:
                take(sent.popleft())
        while sent:
            take(sent.popleft())
    return got


def _receive(stream: QueryStream) -> QueryResult | QueryError:
    try:
        return stream.receive()
    except QueryError as e:  # its query failed, or its process had to be ended or died
        return e
