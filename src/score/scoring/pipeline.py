"""Scoring: every instance of a task set gets exactly one outcome, with its reason.

The scorer is a plain function of tasks, predictions, an executor and a comparator
profile; the CLI is a thin layer over it, and a notebook can call it the same way:

    tasks = load_tasks("data/benchmark/omop_tasks.jsonl")
    preds = read_predictions("preds.jsonl", tasks)
    with Executor(score.database()) as ex:  # import score: the embedded database
        ctx = ScoringContext(ex, GoldCache(None, ex), "sqlgold", preds.run)
        results = list(score_predictions(tasks, preds.by_key, ctx))

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
the reason.  What decides each step is :mod:`score.scoring.decision` (pure functions of
what was found); the phases that find it are :mod:`score.scoring.phases`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import ExitStack
from typing import Any

from score.inputs.predictions import Prediction
from score.inputs.task_set import Instance, instances
from score.scoring.instance_result import InstanceResult
from score.scoring.parse_lane import PARSE_AHEAD, ParseLane
from score.scoring.phases import Pending, ScoringContext, compare_phase, query_phase
from score.scoring.run_lane import SENT_AHEAD, RunLane

__all__ = ["LOOKAHEAD", "ScoringContext", "score_instance", "score_predictions"]


def score_instance(
    instance: Instance, prediction: Prediction | None, ctx: ScoringContext
) -> InstanceResult:
    """The result of one instance; whatever the prediction does, it ends in an outcome
    with a reason (an unexpected failure of sqlgold's own code too)."""
    return compare_phase(query_phase(instance, prediction, ctx), ctx)


#: Instances in flight ahead of the comparator, per run lane: while the scoring process
#: compares one result, each run lane's query process runs an answer's query (with
#: :data:`~score.scoring.run_lane.SENT_AHEAD` more waiting in its pipe) and the parse
#: process prepares (extraction, guard, logical form) the ones after them (with
#: :data:`~score.scoring.parse_lane.PARSE_AHEAD` more in its pipe), with room for a long
#: text's parse.
LOOKAHEAD = 3 + SENT_AHEAD + PARSE_AHEAD


def score_predictions(
    tasks: Iterable[dict[str, Any]],
    predictions: Mapping[tuple[str, str], Prediction],
    ctx: ScoringContext,
    *,
    skip: frozenset[tuple[str, str]] = frozenset(),
    jobs: int = 1,
    languages: Collection[str] | None = None,
) -> Iterator[InstanceResult]:
    """Score every instance of ``tasks`` not in ``skip``, yielding results in task order.

    The denominator is the whole task set (in ``languages``, when given): instances
    without a prediction are yielded as ``missing``.  Scoring is a pipeline: one query
    process parses answers (:class:`~score.scoring.parse_lane.ParseLane`) while ``jobs``
    others run the queries of the ones before
    (:class:`~score.scoring.run_lane.RunLane`), and this process compares the results.
    Ctrl-C (KeyboardInterrupt) closes the executor, so the queries under way stop at
    once, and is raised again.
    """
    todo = [i for i in instances(tasks, languages) if i.key not in skip]
    yield from _scored(todo, predictions, ctx, jobs)


def _done(pending: Pending) -> Future[Pending]:
    done: Future[Pending] = Future()
    done.set_result(pending)
    return done


def _scored(
    todo: list[Instance],
    predictions: Mapping[tuple[str, str], Prediction],
    ctx: ScoringContext,
    jobs: int,
) -> Iterator[InstanceResult]:
    """A pipeline: the parse lane prepares each answer in its query process, ``jobs`` run
    lanes (each its own query process) run the prepared queries, taking instances in
    turn, and this process compares the results in task order."""
    lanes = max(jobs, 1)
    with ParseLane(ctx) as parse, ExitStack() as stack:
        runs = [stack.enter_context(RunLane(ctx)) for _ in range(lanes)]
        queued: deque[Future[Pending]] = deque()
        sent = 0
        try:
            for instance in todo:
                prediction = predictions.get(instance.key)
                if prediction is None:  # missing: decided here, nothing for a lane to do
                    queued.append(_done(query_phase(instance, None, ctx)))
                else:
                    prepared = parse.submit(instance, prediction)
                    queued.append(runs[sent % lanes].submit(prepared))
                    sent += 1
                if len(queued) > LOOKAHEAD * lanes:
                    yield compare_phase(queued.popleft().result(), ctx)
            while queued:
                yield compare_phase(queued.popleft().result(), ctx)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the queries under way stop now,
            # before the lanes are left (each waits for its query's reply), not when each
            # reaches its time limit
            ctx.executor.close()
            raise
