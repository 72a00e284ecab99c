"""The phases one instance goes through, each feeding :mod:`score.scoring.decision`.

The query phase (:func:`query_phase`) asks a query process for what needs one: the
answer's extraction, guard and run (:mod:`score.scoring.answer`), or a result CSV; the
compare phase (:func:`compare_phase`) takes the gold result (from the gold cache, which
may have run it ahead in a query process of its own) and runs the comparator profile in
the scoring process, so no query process waits for a gold. In the scoring pipeline the
query phase is split: the parse lane (:mod:`score.scoring.parse_lane`) prepares the
answer in one process and a run lane (:mod:`score.scoring.run_lane`) runs its query in
another and finishes it with :func:`finish_answer`. Whatever fails, the instance ends
with a decision: a failure of sqlgold's own code is that instance's outcome
(:func:`score.scoring.decision.for_failure`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

from score.comparison.compare import compare
from score.comparison.mismatch_cause import mismatch_cause
from score.comparison.profiles.base import Verdict
from score.comparison.soft_f1 import soft_f1
from score.errors import DatabaseError
from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult
from score.inputs.predictions import Prediction
from score.inputs.task_set import Instance
from score.scoring import decision
from score.scoring.alternative_golds import alternative_results, best_match
from score.scoring.answer import (
    Answer,
    AnswerReply,
    PrepareAnswer,
    RunAnswer,
    needs_run,
    with_run,
)
from score.scoring.extract import SQL
from score.scoring.gold_cache import GoldCache
from score.scoring.gold_pin import GoldPins, pinned_gold, task_today
from score.scoring.instance_result import InstanceResult
from score.scoring.outcomes import Outcome
from score.scoring.result_preview import result_preview


@dataclass(frozen=True)
class ScoringContext:
    """What every instance is scored with."""

    executor: Executor
    gold: GoldCache
    profile: str = "sqlgold"
    run: str = "run"
    pins: GoldPins = field(default_factory=GoldPins)
    dialect: str | None = None  # predictions' SQL dialect when not the engine's own
    #: Compare with each task's pinned gold result instead of running its gold (the
    #: priors: :func:`score.scoring.gold_pin.pinned_gold`); a task pinning none runs it.
    gold_from_pin: bool = False
    #: Results of queries already run in this pass, by the text run, shared by every
    #: instance whose answer runs the same text (the priors: each answers every instance
    #: with one constant query, so ``SELECT 0`` runs once, not once per instance, on a
    #: server too); None: every answer runs its own query.
    shared_runs: dict[str, QueryResult] | None = None
    #: Answers decided by their text alone (an abstention, a format failure: the
    #: extraction's verdict, made before the task or its gold plays any part), by the
    #: prediction's text, kind and status: the priors give every instance the same text,
    #: so ``ABSTAIN`` goes to a query process once, not once per instance.  A prepared
    #: SQL answer is kept here too, by its whole request (text, gold, today, dialect:
    #: all its preparation depends on), so ``SELECT 0`` is prepared once per gold.
    #: None: every answer goes.
    decided_texts: dict[Any, AnswerReply] | None = None


@dataclass
class Pending:
    """An instance between its phases: its result so far, what the pipeline (one job)
    left for its query process (an answer's query to run, a result CSV to read), and
    the results to compare."""

    result: InstanceResult
    task: dict[str, Any]
    prediction: Prediction | None = None
    prepared: AnswerReply | None = None
    csv_to_read: bool = False
    predicted: QueryResult | None = None
    gold: QueryResult | None = None
    alternatives: list[QueryResult] = field(default_factory=list)  # their results
    seconds: float = 0.0
    request: Answer | None = None  # its answer's request, kept where replies are reused

    def settle(self, decided: decision.Decision) -> None:
        self.result.settle(decided)

    def fail(self, e: Exception) -> None:
        """A failure of sqlgold's own code: the instance's outcome, nothing left to do.
        A database that went away is no instance's outcome: it ends the run (every
        instance after it would fail alike), and ``--resume`` goes on once it is back."""
        if isinstance(e, DatabaseError):
            raise e
        self.predicted = self.prepared = None
        self.csv_to_read = False
        self.settle(decision.for_failure(e))


def query_phase(
    instance: Instance,
    prediction: Prediction | None,
    ctx: ScoringContext,
    *,
    prepare_only: bool = False,
) -> Pending:
    """What needs a query process: the answer's extraction, guard and run, and the gold
    result (cached).  With ``prepare_only`` (the pipeline's first phase) the answer is
    only prepared (:class:`~score.scoring.answer.PrepareAnswer`: extraction, guard,
    logical form) while another query process runs the previous answer's query."""
    start = time.perf_counter()
    pending = Pending(InstanceResult.start(instance, ctx.run, prediction), instance.task)
    pending.prediction = prediction
    try:
        _answer(pending, ctx, prepare_only=prepare_only)
    except Exception as e:  # noqa: BLE001 - one instance never ends the run
        pending.fail(e)
    pending.seconds = time.perf_counter() - start
    return pending


def _answer(pending: Pending, ctx: ScoringContext, *, prepare_only: bool) -> None:
    request = answer_request(pending, ctx)
    if request is None:
        if pending.csv_to_read and not prepare_only:
            pending.csv_to_read = False
            read_csv(pending, ctx)
        elif pending.prepared is not None and not prepare_only:  # prepared before: run it
            reply, pending.prepared = pending.prepared, None
            run = run_request(reply, ctx)
            try:
                outcome = run if isinstance(run, QueryError) else ctx.executor.call(run)
            except QueryError as e:
                return pending.settle(decision.for_lost_process(e))
            finish_answer(pending, with_run(reply, outcome), ctx)
        return None
    try:
        reply = ctx.executor.call(PrepareAnswer(request) if prepare_only else request)
    except QueryError as e:  # its process had to be ended: past the time limit, or died
        return pending.settle(decision.for_lost_process(e))
    take_reply(pending, reply, ctx, prepared=prepare_only)


def answer_request(pending: Pending, ctx: ScoringContext) -> Answer | None:
    """The request a query process must handle for ``pending``'s answer, or None when
    there is none: the instance is decided (no prediction, an abstention the generator
    said, a text decided before), or its result CSV is to be read (``csv_to_read``)."""
    prediction, task = pending.prediction, pending.task
    decided = decision.for_prediction(prediction)
    if decided is not None:
        pending.settle(decided)
        return None
    assert prediction is not None
    if prediction.kind == "csv":
        pending.csv_to_read = True
        return None
    known = ctx.decided_texts.get(text_key(prediction)) if ctx.decided_texts is not None else None
    if known is not None:
        finish_answer(pending, known, ctx)
        return None
    gold_sql = task["gold_sql"] if task["answerable"] and task["gold_sql"] else None
    request = Answer(
        output=prediction.output,
        sql=prediction.sql,
        ready_sql=prediction.kind == "sql",
        pred=prediction.kind == "pred",
        status=prediction.status,
        gold_sql=gold_sql,
        today=task_today(task),
        dialect=ctx.dialect,
    )
    if ctx.decided_texts is not None:
        prepared = ctx.decided_texts.get(request)
        if prepared is not None:  # the same request prepared before: its query runs
            pending.prepared = replace(prepared, seconds_left=None)
            return None
        pending.request = request
    return request


def take_reply(
    pending: Pending, reply: AnswerReply, ctx: ScoringContext, *, prepared: bool
) -> None:
    """What a query process replied to :func:`answer_request`'s request (a
    :class:`~score.scoring.answer.PrepareAnswer` of it when ``prepared``): kept for the
    run phase when its SQL is still to run, else the answer's end."""
    if ctx.decided_texts is not None and reply.kind != SQL:
        assert pending.prediction is not None
        ctx.decided_texts.setdefault(text_key(pending.prediction), reply)
    elif ctx.decided_texts is not None and prepared and needs_run(reply):
        if pending.request is not None:
            ctx.decided_texts.setdefault(pending.request, reply)
    if prepared and needs_run(reply):
        pending.prepared = reply  # the query runs in the pipeline's next phase
        return None
    finish_answer(pending, reply, ctx)


def text_key(prediction: Prediction) -> tuple:
    """What decides an answer before its task plays any part
    (:attr:`ScoringContext.decided_texts`)."""
    return (prediction.output, prediction.sql, prediction.kind, prediction.status)


def read_csv_phase(pending: Pending, ctx: ScoringContext) -> Pending:
    """The pipeline's second phase for a result CSV: read it in a query process, then
    take the gold result."""
    start = time.perf_counter()
    pending.csv_to_read = False
    try:
        read_csv(pending, ctx)
    except Exception as e:  # noqa: BLE001 - one instance never ends the run
        pending.fail(e)
    pending.seconds += time.perf_counter() - start
    return pending


def read_csv(pending: Pending, ctx: ScoringContext) -> None:
    """Read the prediction's result CSV in a query process (a failure to read it, its
    process ended included, is the instance's outcome), then take the gold result."""
    prediction = pending.prediction
    assert prediction is not None
    read: QueryResult | QueryError | None = None
    if prediction.csv is not None:
        try:
            read = ctx.executor.read_csv(prediction.csv, prediction.csv_folder or ".")
        except QueryError as e:
            read = e
    decided = decision.for_csv(prediction, read)
    if decided is not None:
        return pending.settle(decided)
    assert isinstance(read, QueryResult)
    _keep_result(pending, read)


def run_request(reply: AnswerReply, ctx: ScoringContext) -> RunAnswer | QueryError:
    """A prepared answer's run request, in what its preparation left of the time limit;
    a timeout if it left nothing."""
    left = reply.seconds_left
    if left is not None and left <= 0:
        limit = ctx.executor.settings.timeout_seconds
        return QueryError("timeout", f"stopped after {limit:g} s (the time limit)")
    assert reply.executed_sql is not None
    seconds = ctx.executor.settings.timeout_seconds if left is None else left
    return RunAnswer(reply.executed_sql, seconds, checked=reply.checked)


def finish_answer(pending: Pending, reply: AnswerReply, ctx: ScoringContext) -> None:
    """Record what became of an answer, and take the gold result to compare with."""
    assert pending.prediction is not None
    result = pending.result
    if reply.kind == SQL:
        result.sql, result.executed_sql, result.lf_match = (
            reply.sql,
            reply.executed_sql,
            reply.lf_match,
        )
        result.transpiled_from = reply.transpiled_from
        result.extracted_by = reply.reason or None
    decided = decision.for_answer(pending.prediction, reply)
    if decided is not None:
        return pending.settle(decided)
    assert reply.result is not None
    result.timings["execute_s"] = round(reply.result.seconds, 6)
    _keep_result(pending, reply.result)


def _keep_result(pending: Pending, predicted: QueryResult) -> None:
    """Keep the predicted result for the compare phase; an unanswerable task's answer is
    decided without it."""
    decided = decision.for_unanswerable(pending.task["answerable"])
    if decided is not None:
        return pending.settle(decided)
    pending.predicted = predicted


def _take_gold(pending: Pending, predicted: QueryResult, ctx: ScoringContext) -> None:
    """Keep the result for the comparator, with the gold's; or decide without them."""
    task = pending.task
    if ctx.gold_from_pin:
        pinned = pinned_gold(task, predicted)
        if isinstance(pinned, str):
            return pending.settle(decision.Decision(Outcome.MISMATCH, pinned))
        if pinned is not None:
            pending.predicted, pending.gold = predicted, pinned
            return None
    today = task_today(task)
    gold = ctx.gold.result(task["gold_sql"], today=today)
    drift = None
    if not isinstance(gold, QueryError):
        drift = ctx.pins.drift(task, gold, ctx.gold.key(task["gold_sql"], today))
    decided = decision.for_gold(gold, drift)
    if decided is not None:
        return pending.settle(decided)
    assert isinstance(gold, QueryResult)
    others = alternative_results(task, ctx.gold, ctx.pins, today)
    if isinstance(others, decision.Decision):
        return pending.settle(others)
    pending.predicted, pending.gold, pending.alternatives = predicted, gold, others


def warm_compare_phase(profile: str) -> threading.Thread:
    """Import, in a thread of their own, what the compare phase takes on first use (the
    profile's comparator, the hashing of gold results, the preview's diff), by comparing
    two small results: started while the query processes open, it keeps that out of
    the first comparison."""

    def warm() -> None:
        try:
            gold = QueryResult.from_rows(["a", "b"], [(1, "x"), (2, "y")])
            other = QueryResult.from_rows(["b", "a"], [("x", 1), ("z", 3)])
            verdict = compare(gold, other, profile, order_matters=False)
            result_preview(gold, other, match=False, order_matters=False, verdict=verdict)
            GoldPins().actual(gold, "", ordered=False)
        except Exception:  # noqa: BLE001 - a warm-up only: the real comparison says what fails
            pass

    thread = threading.Thread(target=warm, name="sqlgold-warm", daemon=True)
    thread.start()
    return thread


def _cause(pending: Pending) -> dict[str, str] | None:
    """What one change would make the two results the same, if one would."""
    assert pending.gold is not None and pending.predicted is not None
    try:
        cause = mismatch_cause(
            pending.gold, pending.predicted, order_matters=pending.task["order_matters"]
        )
    except Exception:  # noqa: BLE001 - an explanation never costs an outcome
        return None
    return None if cause is None else cause.to_dict()


def compare_phase(pending: Pending, ctx: ScoringContext) -> InstanceResult:
    """The comparator's verdict, in the scoring process."""
    start = time.perf_counter()
    result = pending.result
    if pending.predicted is not None and pending.gold is None and not result.decided:
        try:
            _take_gold(pending, pending.predicted, ctx)
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            pending.fail(e)
    if pending.predicted is not None and pending.gold is not None:
        verdict: Any
        try:
            verdict, matched = best_match(
                pending.gold,
                pending.alternatives,
                pending.predicted,
                ctx.profile,
                order_matters=pending.task["order_matters"],
            )
            if pending.task.get("alternative_golds"):
                result.matched_gold = matched
        except Exception as e:  # noqa: BLE001 - a value the comparator cannot handle
            verdict = e
        result.settle(decision.for_verdict(verdict))
        result.timings["compare_s"] = round(time.perf_counter() - start, 6)
        if isinstance(verdict, Verdict) and not verdict.match:
            result.mismatch_cause = _cause(pending)
        if ctx.profile == "bird":
            result.soft_f1 = soft_f1(pending.gold, pending.predicted)
        try:
            result.preview = result_preview(
                pending.gold,
                pending.predicted,
                match=getattr(verdict, "match", False) is True,
                order_matters=pending.task["order_matters"],
                verdict=verdict
                if ctx.profile == "sqlgold" and isinstance(verdict, Verdict)
                else None,
            )
        except Exception:  # noqa: BLE001 - the page's preview never costs an outcome
            result.preview = None
    if not result.decided:  # cannot happen; never leave an instance unclassified
        result.settle(decision.UNDECIDED)
    result.timings["total_s"] = round(pending.seconds + time.perf_counter() - start, 6)
    return result
