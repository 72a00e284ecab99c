"""The parse lane of the scoring pipeline: answers prepared by one parse process, sent ahead.

Each answer's extraction, guard and logical form (:class:`~score.scoring.answer.PrepareAnswer`)
go to one query process of the parse lane through a
:class:`~score.execution.executor.QueryStream`, sent before the previous reply is read,
so that process goes from one answer to the next without waiting for this one; the run
lanes (:mod:`score.scoring.run_lane`) run the prepared queries meanwhile.  What needs no
query process (no prediction, an abstention the generator said, a text decided before, a
result CSV to read in the run lane) is passed on at once.
"""

from __future__ import annotations

import time
from collections import deque
from concurrent.futures import Future
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from score.execution.executor import QueryStream
from score.execution.result import QueryError
from score.inputs.predictions import Prediction
from score.inputs.task_set import Instance
from score.scoring import decision
from score.scoring.answer import PrepareAnswer
from score.scoring.extract import SQL
from score.scoring.instance_result import InstanceResult
from score.scoring.lane import Lane
from score.scoring.phases import Pending, ScoringContext, answer_request, take_reply, text_key

#: Preparations sent to the parse process beyond the one it handles (a reply read late,
#: this process's threads sharing one interpreter lock, does not leave it idle).
PARSE_AHEAD = 8


@dataclass
class _Sent:
    pending: Pending
    out: Future[Pending]
    local: float  # seconds this process spent on it before sending it


class ParseLane(Lane[_Sent]):
    """The pipeline's first phase on a thread of its own: :meth:`submit` gives each
    instance's :class:`Pending`, prepared, as a future; every instance gets one,
    whatever fails."""

    thread_name = "sqlgold-parse"

    def __init__(self, ctx: ScoringContext) -> None:
        self._runs_sql: set[tuple] = set()  # texts whose reply was SQL: never decided alone
        super().__init__(ctx)

    def submit(self, instance: Instance, prediction: Prediction | None) -> Future[Pending]:
        return self._submit(instance, prediction)

    def _stream(self) -> AbstractContextManager[QueryStream]:
        return self._ctx.executor.stream(PrepareAnswer.lane)

    def _take(
        self, out: Future[Pending], item: tuple[Any, ...], stream: QueryStream, sent: deque[_Sent]
    ) -> None:
        instance: Instance
        prediction: Prediction | None
        instance, prediction = item
        start = time.perf_counter()
        pending = Pending(InstanceResult.start(instance, self._ctx.run, prediction), instance.task)
        pending.prediction = prediction
        if self._ctx.decided_texts is not None and prediction is not None:
            # a text that may be decided by itself (the priors' ABSTAIN): the reply to
            # the same text sent before is read first, so it goes to the process once
            key = text_key(prediction)
            if key not in self._runs_sql and any(
                f.pending.prediction and text_key(f.pending.prediction) == key for f in sent
            ):
                while sent:
                    self._finish(sent.popleft(), stream)
        request = None
        try:
            request = answer_request(pending, self._ctx)
            if request is not None:
                stream.send(PrepareAnswer(request))
        except QueryError as e:  # its process could not be reached
            pending.settle(decision.for_lost_process(e))
            request = None
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            pending.fail(e)  # (a database gone is raised: it ends the run)
            request = None
        if request is None:
            pending.seconds = time.perf_counter() - start
            out.set_result(pending)
            return
        sent.append(_Sent(pending, out, time.perf_counter() - start))
        while len(sent) > PARSE_AHEAD:
            self._finish(sent.popleft(), stream)

    def _finish(self, flight: _Sent, stream: QueryStream) -> None:
        pending = flight.pending
        read = time.perf_counter()
        try:
            try:
                reply = stream.receive()
            except QueryError as e:  # its process had to be ended, or died
                pending.settle(decision.for_lost_process(e))
            else:
                read = time.perf_counter()
                if reply.kind == SQL and pending.prediction is not None:
                    self._runs_sql.add(text_key(pending.prediction))
                take_reply(pending, reply, self._ctx, prepared=True)
        except Exception as e:  # noqa: BLE001 - one instance never ends the run
            try:
                pending.fail(e)
            except BaseException as ended:  # a database gone ends the run: told first
                flight.out.set_exception(ended)
                raise
        except BaseException as e:  # Ctrl-C: the caller waits for this instance
            flight.out.set_exception(e)
            raise
        # its own time: what its preparation took in the parse process (from when that
        # process read it: not the time it waited behind those sent before it, nor a reply
        # read late) and what this process spent on it before and after
        pending.seconds += flight.local + stream.last_seconds + time.perf_counter() - read
        flight.out.set_result(pending)
