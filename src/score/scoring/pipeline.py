"""Scoring: every instance of a task set gets exactly one outcome, with its reason.

The scorer is a plain function of tasks, predictions, an executor and a comparator
profile; the CLI is a thin layer over it, and a notebook can call it the same way:

    tasks = load_tasks("data/benchmark/omop_tasks.jsonl")
    preds = read_predictions("preds.jsonl", tasks)
    with Executor("data/omop/synthea1k.duckdb") as ex:
        ctx = ScoringContext(ex, GoldCache(None, ex), "sqlgold", preds.run)
        records = list(score_predictions(tasks, preds.by_key, ctx))

For each instance (a task in one language), in pipeline order:

missing (no prediction) -> generation_error (the generator said so) -> in sandbox
workers, under one query time limit (:mod:`score.scoring.answer`): extraction (abstained,
cut_off, format_failure, or SQL), the guard, the logical-form match and the run (a
failure maps to parse/build/render/execute error) -> for an unanswerable task any
answer is wrong -> gold result (cached; a failing gold is ``gold_error``, one that is not
the result its task pinned is ``gold_drift``) -> the comparator profile decides correct
or mismatch.  A query of an output the generator said was cut off that fails is
``cut_off``.  Gold and prediction run under the fixed today the task was verified
under.  Nothing a prediction does ends the run: a worker past its time limit is killed
and replaced, and even a failure of sqlgold's own code is that instance's outcome with
the reason.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from score.comparison.compare import compare
from score.execution.executor import Executor, QueryStream
from score.execution.result import QueryError, QueryResult
from score.inputs.predictions import Prediction
from score.inputs.task_set import Instance, instances
from score.scoring import outcomes as oc
from score.scoring.answer import Answer, AnswerReply, PrepareAnswer, RunAnswer, needs_run, with_run
from score.scoring.extract import ABSTAIN, CUT_OFF, FORMAT_FAILURE
from score.scoring.gold_cache import GoldCache
from score.scoring.gold_pin import GoldPins, task_today


@dataclass(frozen=True)
class ScoringContext:
    """What every instance is scored with."""

    executor: Executor
    gold: GoldCache
    profile: str = "sqlgold"
    run: str = "run"
    pins: GoldPins = field(default_factory=GoldPins)
    dialect: str | None = None  # predictions' SQL dialect when not the engine's own


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


@dataclass
class _Pending:
    """An instance between its phases: its record, what the pipeline (one job) left
    for its query process (an answer's query to run, a result CSV to read), and the
    results to compare."""

    record: dict[str, Any]
    task: dict[str, Any]
    prediction: Prediction | None = None
    prepared: AnswerReply | None = None
    csv_to_read: bool = False
    predicted: QueryResult | None = None
    gold: QueryResult | None = None
    seconds: float = 0.0


def score_instance(
    instance: Instance, prediction: Prediction | None, ctx: ScoringContext
) -> dict[str, Any]:
    """The outcome record of one instance; whatever the prediction does, it ends in an
    outcome with a reason (an unexpected failure of sqlgold's own code too)."""
    return _compare_phase(_query_phase(instance, prediction, ctx), ctx)


def _query_phase(
    instance: Instance,
    prediction: Prediction | None,
    ctx: ScoringContext,
    *,
    prepare_only: bool = False,
) -> _Pending:
    """What needs a query process: the answer's extraction, guard and run, and the gold
    result (cached).  With ``prepare_only`` (the pipeline's first phase) the answer is
    only prepared (:class:`~score.scoring.answer.PrepareAnswer`: extraction, guard, logical form)
    while another query process runs the previous answer's query; :class:`_RunLane`
    completes it (and reads a result CSV: only the query process runs queries)."""
    start = time.perf_counter()
    pending = _Pending(_base_record(instance, ctx.run, prediction), instance.task, prediction)
    try:
        _decide(instance, prediction, ctx, pending, prepare_only=prepare_only)
    except Exception as e:  # noqa: BLE001 - one instance never ends the run
        _failed_in_sqlgold(pending, e)
    pending.seconds = time.perf_counter() - start
    return pending


def _read_csv_phase(pending: _Pending, ctx: ScoringContext) -> _Pending:
    """The pipeline's second phase for a result CSV (:class:`_RunLane` runs answers'
    queries itself): read it in a query process, then take the gold result."""
    start = time.perf_counter()
    pending.csv_to_read = False
    assert pending.prediction is not None
    try:
        _decide_relation(pending.task, pending.prediction, ctx, pending)
    except QueryError as e:  # its process had to be ended: past the time limit, or died
        _set(pending.record, oc.outcome_for_error(e.kind), e.message)
    except Exception as e:  # noqa: BLE001
        _failed_in_sqlgold(pending, e)
    pending.seconds += time.perf_counter() - start
    return pending


def _run_request(reply: AnswerReply, ctx: ScoringContext) -> RunAnswer | QueryError:
    """A prepared answer's run request, in what its preparation left of the time
    limit; a timeout if it left nothing."""
    left = reply.seconds_left
    if left is not None and left <= 0:
        limit = ctx.executor.settings.timeout_seconds
        return QueryError("timeout", f"stopped after {limit:g} s (the time limit)")
    assert reply.executed_sql is not None
    seconds = ctx.executor.settings.timeout_seconds if left is None else left
    return RunAnswer(reply.executed_sql, seconds, checked=reply.checked)


@dataclass
class _InFlight:
    """An answer whose query was sent to the run lane's query process."""

    pending: _Pending
    out: Future[_Pending]
    start: float


#: Answers' queries sent to the query process beyond the one it runs: while it runs
#: one, the next ones wait in its pipe, so it does not wait for this process between
#: them (this process's threads share one interpreter lock, and a core with the
#: parser, so a reply may be read late).
SENT_AHEAD = 2


class _RunLane:
    """The pipeline's second phase (one job) on a thread of its own: each prepared
    answer's query goes to one query process through a
    :class:`~score.execution.executor.QueryStream`, sent before the previous answer's reply is
    read, so the scoring process's round trip and its work on the reply overlap the
    next query.  What needs a blocking call on the query lane (a result CSV to read, a
    gold result not yet known) waits until the replies sent ahead are in, so it goes to
    the same process.  :meth:`submit` gives each instance's completed
    :class:`_Pending` as a future; every instance gets one, whatever fails."""

    def __init__(self, ctx: ScoringContext) -> None:
        self._ctx = ctx
        self._inbox: queue.SimpleQueue[tuple[Future[_Pending], Future[_Pending]] | None]
        self._inbox = queue.SimpleQueue()
        self._finished_at = 0.0  # perf_counter() when the last sent answer was finished
        self._thread = threading.Thread(target=self._serve, name="sqlgold-query", daemon=True)
        self._thread.start()

    def submit(self, prepared: Future[_Pending]) -> Future[_Pending]:
        out: Future[_Pending] = Future()
        self._inbox.put((prepared, out))
        return out

    def __enter__(self) -> _RunLane:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inbox.put(None)
        self._thread.join()

    def _serve(self) -> None:
        sent: deque[_InFlight] = deque()
        try:
            self._serve_all(sent)
        except BaseException as e:  # noqa: BLE001 - a bug here must not leave the caller waiting
            for flight in sent:
                if not flight.out.done():
                    flight.out.set_exception(e)
            while (item := self._inbox.get()) is not None:
                item[1].set_exception(e)

    def _serve_all(self, sent: deque[_InFlight]) -> None:
        with self._ctx.executor.stream() as stream:
            while True:
                try:  # with nothing more submitted yet, what was sent is finished first:
                    # the caller may be waiting for it before it submits more
                    item = self._inbox.get_nowait() if sent else self._inbox.get()
                except queue.Empty:
                    self._finish(sent.popleft(), stream)
                    continue
                if item is None:
                    break
                prepared, out = item
                try:
                    self._take(prepared.result(), out, stream, sent)
                except BaseException as e:
                    if not out.done():
                        out.set_exception(e)
                    raise
            while sent:
                self._finish(sent.popleft(), stream)

    def _take(
        self, pending: _Pending, out: Future[_Pending], stream: QueryStream, sent: deque
    ) -> None:
        if pending.prepared is None and not pending.csv_to_read:
            return out.set_result(pending)
        request: RunAnswer | QueryError | None = None
        start = time.perf_counter()
        try:
            if pending.prepared is not None:
                request = _run_request(pending.prepared, self._ctx)
            if isinstance(request, RunAnswer):
                stream.send(request)
                sent.append(_InFlight(pending, out, start))
                while len(sent) > SENT_AHEAD:
                    self._finish(sent.popleft(), stream)
                return None
            if isinstance(request, QueryError):  # its preparation left no time
                reply, pending.prepared = pending.prepared, None
                assert reply is not None and pending.prediction is not None
                _with_reply(with_run(reply, request), pending.prediction, self._ctx, pending)
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            _failed_in_sqlgold(pending, e)
        if pending.prepared is None and not pending.csv_to_read:
            pending.seconds += time.perf_counter() - start
            return out.set_result(pending)
        while sent:  # a result CSV to read: what was sent ahead comes first (and the
            # stream gives its process back with the last reply)
            self._finish(sent.popleft(), stream)
        out.set_result(_read_csv_phase(pending, self._ctx))

    def _finish(self, flight: _InFlight, stream: QueryStream) -> None:
        pending, ctx = flight.pending, self._ctx
        reply, pending.prepared = pending.prepared, None
        assert reply is not None and pending.prediction is not None
        try:
            try:
                outcome = stream.receive()
            except QueryError as e:  # its process had to be ended, or died
                _set(pending.record, oc.outcome_for_error(e.kind), e.message)
            else:
                if stream.pending and not _gold_known(pending.task, ctx):
                    stream.settle()  # the gold runs on the stream's query process
                _with_reply(with_run(reply, outcome), pending.prediction, ctx, pending)
        except Exception as e:  # noqa: BLE001
            _failed_in_sqlgold(pending, e)
        # its own time: from when its query could start (sent, and the previous one
        # finished), not the time it waited behind the queries sent before it
        now = time.perf_counter()
        pending.seconds += now - max(flight.start, self._finished_at)
        self._finished_at = now
        flight.out.set_result(pending)


def _gold_known(task: dict[str, Any], ctx: ScoringContext) -> bool:
    """Whether the task's gold result can be had without running a query."""
    if not task["answerable"]:
        return True
    return ctx.gold.known(task["gold_sql"], today=task_today(task))


def _failed_in_sqlgold(pending: _Pending, e: Exception) -> None:
    pending.predicted = pending.prepared = None
    pending.csv_to_read = False
    _set(pending.record, oc.EXECUTE_ERROR, f"scoring failed: {_describe(e)}")


def _compare_phase(pending: _Pending, ctx: ScoringContext) -> dict[str, Any]:
    """The comparator's verdict, in the scoring process."""
    start = time.perf_counter()
    record = pending.record
    if pending.predicted is not None and pending.gold is not None:
        try:
            verdict = compare(
                pending.gold,
                pending.predicted,
                ctx.profile,
                order_matters=pending.task["order_matters"],
            )
            _set(record, oc.CORRECT if verdict.match else oc.MISMATCH, verdict.reason)
        except Exception as e:  # noqa: BLE001 - a value the comparator cannot handle
            _set(record, oc.MISMATCH, f"the results could not be compared: {_describe(e)}")
        record["timings"]["compare_s"] = round(time.perf_counter() - start, 6)
    if record["outcome"] is None:  # cannot happen; never leave an instance unclassified
        _set(record, oc.EXECUTE_ERROR, "scoring failed: no outcome was decided")
    record["timings"]["total_s"] = round(pending.seconds + time.perf_counter() - start, 6)
    return record


def _set(record: dict[str, Any], outcome: str, reason: str) -> None:
    record["outcome"] = outcome
    record["reason"] = reason


def _describe(e: BaseException) -> str:
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 300 else text[:297] + "..."


def _decide(
    instance: Instance,
    prediction: Prediction | None,
    ctx: ScoringContext,
    pending: _Pending,
    *,
    prepare_only: bool = False,
) -> None:
    task, record = instance.task, pending.record
    if prediction is None:
        return _set(record, oc.MISSING, "no prediction for this instance")
    if prediction.status == "generation_error":
        return _set(
            record, oc.GENERATION_ERROR, "the generator reported that the model call failed"
        )
    if prediction.kind == "csv":
        if prepare_only:
            pending.csv_to_read = True
            return None
        return _decide_relation(task, prediction, ctx, pending)
    answerable_gold = task["gold_sql"] if task["answerable"] and task["gold_sql"] else None
    request = Answer(
        output=prediction.output,
        sql=prediction.sql,
        ready_sql=prediction.kind == "sql",
        status=prediction.status,
        gold_sql=answerable_gold,
        today=task_today(task),
        dialect=ctx.dialect,
    )
    try:
        reply = ctx.executor.call(PrepareAnswer(request) if prepare_only else request)
    except QueryError as e:  # its process had to be ended: past the time limit, or died
        return _set(record, oc.outcome_for_error(e.kind), e.message)
    if prepare_only and needs_run(reply):
        pending.prepared = reply  # the query runs in the pipeline's next phase
        return None
    _with_reply(reply, prediction, ctx, pending)


def _with_reply(
    reply: AnswerReply, prediction: Prediction, ctx: ScoringContext, pending: _Pending
) -> None:
    """Record what became of an answer, and take the gold result to compare with."""
    record = pending.record
    if reply.kind == ABSTAIN:
        return _set(record, oc.ABSTAINED, reply.reason)
    if reply.kind == CUT_OFF:
        return _set(record, oc.CUT_OFF, reply.reason)
    if reply.kind == FORMAT_FAILURE:
        return _set(record, oc.FORMAT_FAILURE, reply.reason)
    record["sql"] = reply.sql
    record["executed_sql"] = reply.executed_sql
    record["lf_match"] = reply.lf_match
    if reply.error is not None:
        return _failed(record, reply.error, prediction)
    record["timings"]["execute_s"] = round(reply.result.seconds, 6)
    _with_gold(pending.task, reply.result, ctx, pending)


def _decide_relation(
    task: dict, prediction: Prediction, ctx: ScoringContext, pending: _Pending
) -> None:
    if prediction.csv is None:
        return _set(pending.record, oc.EXECUTE_ERROR, "terminal failure (null in the index)")
    try:
        predicted = ctx.executor.read_csv(prediction.csv, prediction.csv_folder or ".")
    except QueryError as e:
        return _set(pending.record, oc.EXECUTE_ERROR, f"cannot read the result CSV: {e.message}")
    _with_gold(task, predicted, ctx, pending)


def _with_gold(task: dict, predicted: QueryResult, ctx: ScoringContext, pending: _Pending) -> None:
    """Keep the result for the comparator, with the gold's; or decide without them."""
    if not task["answerable"]:
        return _set(
            pending.record, oc.MISMATCH, "the question is unanswerable here; expected ABSTAIN"
        )
    today = task_today(task)
    gold = ctx.gold.result(task["gold_sql"], today=today)
    if isinstance(gold, QueryError):
        return _set(pending.record, oc.GOLD_ERROR, f"the gold failed: {gold.kind}: {gold.message}")
    drift = ctx.pins.drift(task, gold, ctx.gold.key(task["gold_sql"], today))
    if drift is not None:
        return _set(pending.record, oc.GOLD_DRIFT, drift)
    pending.predicted, pending.gold = predicted, gold


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


#: Instances in flight ahead of the comparator with one job: while the scoring process
#: compares one result, one query process runs the next answer's query (with
#: :data:`SENT_AHEAD` more waiting in its pipe) and another parses (extraction, guard,
#: logical form) the ones after them, with room for a long text's parse (at most two
#: results wait for the comparator besides the one it compares).
LOOKAHEAD = 4 + SENT_AHEAD


def score_predictions(
    tasks: Iterable[dict[str, Any]],
    predictions: Mapping[tuple[str, str], Prediction],
    ctx: ScoringContext,
    *,
    skip: frozenset[tuple[str, str]] = frozenset(),
    jobs: int = 1,
    on_record: Callable[[dict[str, Any]], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """Score every instance of ``tasks`` not in ``skip``, yielding records in task order.

    The denominator is the whole task set: instances without a prediction are yielded
    as ``missing``.  With one job, scoring is a pipeline: one query process parses an
    answer (:func:`_query_phase`) while another runs the previous answer's query
    (:class:`_RunLane`) and this process compares the one before; with ``jobs`` > 1,
    that many instances are scored at once, each in its own query process.
    """
    todo = [i for i in instances(tasks) if i.key not in skip]

    def emit(record: dict[str, Any]) -> dict[str, Any]:
        if on_record:
            on_record(record)
        return record

    if jobs <= 1:
        with (
            ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlgold-prepare") as parse,
            _RunLane(ctx) as run,
        ):
            queued: deque[Future[_Pending]] = deque()
            for instance in todo:
                prediction = predictions.get(instance.key)
                prepared = parse.submit(
                    _query_phase, instance, prediction, ctx, prepare_only=True
                )
                queued.append(run.submit(prepared))
                if len(queued) > LOOKAHEAD:
                    yield emit(_compare_phase(queued.popleft().result(), ctx))
            while queued:
                yield emit(_compare_phase(queued.popleft().result(), ctx))
        return
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for record in pool.map(lambda i: score_instance(i, predictions.get(i.key), ctx), todo):
            yield emit(record)


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
