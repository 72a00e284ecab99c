"""The run lane of the one-job pipeline: answers' queries sent ahead to one query process.

While the scoring process compares one instance and a parse process prepares the next
ones (:mod:`score.scoring.pipeline`), the run lane, a thread of its own, sends each
prepared answer's query to one query process through a
:class:`~score.execution.executor.QueryStream` before the previous reply is read, so
the query process goes from one query to the next without waiting for this process (a
gold result is taken later, by the compare phase).
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from score.execution.executor import QueryStream
from score.execution.result import QueryError, QueryResult
from score.scoring import decision
from score.scoring.answer import RunAnswer, with_run
from score.scoring.lane import Lane
from score.scoring.phases import (
    Pending,
    finish_answer,
    read_csv_phase,
    run_request,
)


@dataclass
class InFlight:
    """An answer whose query was sent to the run lane's query process."""

    pending: Pending
    out: Future[Pending]
    local: float  # seconds this process spent on it before sending its query


#: Answers' queries sent to the query process beyond the one it runs: while it runs
#: one, the next ones wait in its pipe, so it does not wait for this process between
#: them (this process's threads share one interpreter lock, and a core with the
#: parser, so a reply may be read late).
SENT_AHEAD = 4


class RunLane(Lane[InFlight]):
    """The pipeline's second phase on a thread of its own (one per job): each prepared
    answer's query goes to one query process through a
    :class:`~score.execution.executor.QueryStream`, sent before the previous answer's
    reply is read, so the scoring process's round trip and its work on the reply overlap
    the next query.  What needs a blocking call on the query lane (a result CSV to read)
    waits until the replies sent ahead are in, so it goes to the same process.
    :meth:`submit` gives each instance's completed :class:`Pending` as a future; every
    instance gets one, whatever fails."""

    thread_name = "sqlgold-query"

    def submit(self, prepared: Future[Pending]) -> Future[Pending]:
        return self._submit(prepared)

    def _stream(self) -> AbstractContextManager[QueryStream]:
        return self._ctx.executor.stream()

    def _take(
        self,
        out: Future[Pending],
        item: tuple[Any, ...],
        stream: QueryStream,
        sent: deque[InFlight],
    ) -> None:
        pending: Pending = item[0].result()
        if pending.prepared is None and not pending.csv_to_read:
            return out.set_result(pending)
        request: RunAnswer | QueryError | None = None
        start = time.perf_counter()
        try:
            if pending.prepared is not None:
                request = run_request(pending.prepared, self._ctx)
            shared = self._ctx.shared_runs
            if isinstance(request, RunAnswer) and shared is not None and request.sql in shared:
                reply, pending.prepared = pending.prepared, None
                assert reply is not None
                finish_answer(pending, with_run(reply, shared[request.sql]), self._ctx)
                request = None
            elif isinstance(request, RunAnswer):
                stream.send(request)
                sent.append(InFlight(pending, out, time.perf_counter() - start))
                while len(sent) > SENT_AHEAD:
                    self._finish(sent.popleft(), stream)
                return None
            if isinstance(request, QueryError):  # its preparation left no time
                reply, pending.prepared = pending.prepared, None
                assert reply is not None and pending.prediction is not None
                finish_answer(pending, with_run(reply, request), self._ctx)
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            pending.fail(e)
        if pending.prepared is None and not pending.csv_to_read:
            pending.seconds += time.perf_counter() - start
            return out.set_result(pending)
        while sent:  # a result CSV to read: what was sent ahead comes first (and the
            # stream gives its process back with the last reply)
            self._finish(sent.popleft(), stream)
        out.set_result(read_csv_phase(pending, self._ctx))

    def _finish(self, flight: InFlight, stream: QueryStream) -> None:
        try:
            self._finish_flight(flight, stream)
        except BaseException as e:  # one that ends the run (a database gone, Ctrl-C): the
            # caller waits for this instance, so it is told first
            if not flight.out.done():
                flight.out.set_exception(e)
            raise

    def _finish_flight(self, flight: InFlight, stream: QueryStream) -> None:
        pending, ctx = flight.pending, self._ctx
        reply, pending.prepared = pending.prepared, None
        assert reply is not None and pending.prediction is not None
        read = time.perf_counter()
        try:
            try:
                outcome = stream.receive()
            except QueryError as e:  # its process had to be ended, or died
                pending.settle(decision.for_lost_process(e))
            else:
                read = time.perf_counter()
                if ctx.shared_runs is not None and isinstance(outcome, QueryResult):
                    ctx.shared_runs.setdefault(reply.executed_sql or "", outcome)
                finish_answer(pending, with_run(reply, outcome), ctx)
        except Exception as e:  # noqa: BLE001
            pending.fail(e)
        # its own time: what its query took in the query process (from when that process
        # read it: not the time it waited behind the queries sent before it, nor a reply
        # read late) and what this process spent on it before and after
        pending.seconds += flight.local + stream.last_seconds + time.perf_counter() - read
        flight.out.set_result(pending)
