"""A lane of the scoring pipeline: a thread of its own that sends work ahead to one query
process through a :class:`~score.execution.executor.QueryStream` and reads the replies
later, so that process goes from one request to the next without waiting for this one.

:class:`Lane` holds what the parse lane (:mod:`score.scoring.parse_lane`) and the run
lanes (:mod:`score.scoring.run_lane`) share: the thread, the inbox, the loop that takes
what is submitted and finishes what was sent ahead when nothing more is, and the rule
that every submitted item's future gets a result or the exception that ended the lane,
so the caller never waits for nothing.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future
from contextlib import AbstractContextManager
from typing import Any, Generic, Protocol, Self, TypeVar

from score.execution.executor import QueryStream
from score.scoring.phases import Pending, ScoringContext


class Flight(Protocol):
    """Work sent to the lane's query process whose reply is still to be read."""

    out: Future[Pending]


F = TypeVar("F", bound=Flight)


class Lane(Generic[F]):
    """A pipeline phase on a thread of its own.  A subclass says how its stream is opened
    (:meth:`_stream`), what it does with one submitted item (:meth:`_take`: settle its
    future at once, or send it and append a flight to ``sent``) and how a flight's reply
    is read (:meth:`_finish`)."""

    thread_name = "sqlgold-lane"

    def __init__(self, ctx: ScoringContext) -> None:
        self._ctx = ctx
        self._inbox: queue.SimpleQueue[tuple[Future[Pending], tuple[Any, ...]] | None]
        self._inbox = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name=self.thread_name, daemon=True)
        self._thread.start()

    def _submit(self, *item: Any) -> Future[Pending]:
        out: Future[Pending] = Future()
        self._inbox.put((out, item))
        return out

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self._inbox.put(None)
        self._thread.join()

    def _stream(self) -> AbstractContextManager[QueryStream]:
        raise NotImplementedError

    def _take(
        self, out: Future[Pending], item: tuple[Any, ...], stream: QueryStream, sent: deque[F]
    ) -> None:
        raise NotImplementedError

    def _finish(self, flight: F, stream: QueryStream) -> None:
        raise NotImplementedError

    def _serve(self) -> None:
        sent: deque[F] = deque()
        try:
            with self._stream() as stream:
                for out, item in self._items(sent, stream):
                    try:
                        self._take(out, item, stream, sent)
                    except BaseException as e:  # one that ends the run: the caller waits for it
                        if not out.done():
                            out.set_exception(e)
                        raise
                while sent:
                    self._finish(sent.popleft(), stream)
        except BaseException as e:  # noqa: BLE001 - a bug here must not leave the caller waiting
            for flight in sent:
                if not flight.out.done():
                    flight.out.set_exception(e)
            while (left := self._inbox.get()) is not None:
                left[0].set_exception(e)

    def _items(
        self, sent: deque[F], stream: QueryStream
    ) -> Iterator[tuple[Future[Pending], tuple[Any, ...]]]:
        """What is submitted, until the lane is closed; with nothing more submitted yet,
        what was sent is finished first (the caller may be waiting for it before it
        submits more)."""
        while True:
            try:
                item = self._inbox.get_nowait() if sent else self._inbox.get()
            except queue.Empty:
                self._finish(sent.popleft(), stream)
                continue
            if item is None:
                return
            yield item
