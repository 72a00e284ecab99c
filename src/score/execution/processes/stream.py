"""Requests answered in order by one sandbox worker, each sent before the previous
one's reply is read.

A :class:`~score.execution.processes.sandbox.Worker` reads its requests one at a time, in
order.  Handing it the next request only once the previous reply has been read and dealt
with leaves it idle for that whole round trip: with PostgreSQL, about a millisecond per query next
to the server's few.  A :class:`WorkerStream` sends ahead instead, so the worker goes
from one request to the next while its supervisor deals with the reply before.

The guarantees of
:meth:`WorkerPool.call <score.execution.processes.sandbox.WorkerPool.call>` hold for each
request:

* **time**: a request is killed ``kill_after`` seconds after it can have started
  (when the reply before it was read, or when it was sent if none was pending);
* **loss**: a worker killed, lost or retiring (its reply said it is the last) takes
  with it only the request it was handling; the requests sent after it were never
  started, and are sent again to a new worker of the lane, in order;
* **memory**: the stream holds one worker of its lane, and gives it back to the pool
  whenever no reply is pending (:meth:`settle`), so a caller that must also make a
  blocking call on the same lane settles first and the lane does not grow a worker;
* **no deadlock**: a request pickled larger than :data:`SEND_AHEAD_BYTES` is sent only
  after every pending reply has been read, since a worker blocked writing a large reply
  and a supervisor blocked writing a large request would wait on each other.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from multiprocessing import reduction
from typing import Any

from score.execution.processes.messages import QUERY_LANE
from score.execution.processes.sandbox import Worker, WorkerDied, WorkerKilled, WorkerPool

#: The largest pickled request sent while a reply is pending: well inside what a
#: socket pair buffers (Linux's default is about 200 KiB each way), so sending it
#: never blocks on a worker busy writing its own reply.
SEND_AHEAD_BYTES = 64 * 1024


@dataclass
class _Sent:
    data: bytes | memoryview  # the pickled request (sent again if its worker was lost before it)
    kill_after: float | None
    started: float | None = None  # when it could have started; None while queued behind
    delivered: bool = False  # written to the current worker
    outcome: tuple[bool, Any] | None = None  # (raised, value or exception) once read
    seconds: float = 0.0  # what it took in its worker (to its kill, if it was killed)


class WorkerStream:
    """Requests of one lane, answered in order by one worker of ``pool``; one thread
    uses a stream.

    >>> stream = WorkerStream(pool)  # doctest: +SKIP
    >>> stream.send(request_1, kill_after=6.0)  # doctest: +SKIP
    >>> stream.send(request_2, kill_after=6.0)  # doctest: +SKIP
    >>> stream.receive(), stream.receive()  # the values, in the order sent  # doctest: +SKIP
    """

    def __init__(self, pool: WorkerPool, lane: str = QUERY_LANE) -> None:
        self._pool = pool
        self._lane = lane
        self._worker: Worker | None = None
        self._sent: deque[_Sent] = deque()  # oldest first; the read ones at the front
        self._gone = False  # a send to the current worker failed
        #: the seconds the request last received took: in its worker, from reading it to
        #: replying, so neither the requests queued before it nor a reply read late count
        self.last_seconds = 0.0

    @property
    def pending(self) -> int:
        """Requests sent and not yet received."""
        return len(self._sent)

    def send(self, request: Any, kill_after: float | None) -> None:
        """Send ``request`` to the stream's worker, which handles it after those sent
        before it; ``kill_after``: seconds it may take once started."""
        data = reduction.ForkingPickler.dumps(request)
        if len(data) > SEND_AHEAD_BYTES:
            self.settle()
        entry = _Sent(data, kill_after)
        if self._unread() is None:
            entry.started = time.monotonic()
        self._sent.append(entry)
        try:
            self._deliver([entry])
        except BaseException:  # no worker could be had: nothing was sent
            self._sent.remove(entry)
            raise

    def receive(self) -> Any:
        """The value of the oldest request not yet received; raises what its
        :meth:`Worker.call <score.execution.processes.sandbox.Worker.call>` would have raised."""
        if not self._sent:
            raise RuntimeError("no request is pending")
        while self._sent[0].outcome is None:
            self._advance()
        entry = self._sent.popleft()
        outcome, self.last_seconds = entry.outcome, entry.seconds
        assert outcome is not None
        raised, value = outcome
        if raised:
            raise value
        return value

    def settle(self) -> None:
        """Read every pending reply (kept for :meth:`receive`) and give the worker back
        to the pool."""
        while self._unread() is not None:
            self._advance()

    def close(self) -> None:
        """Settle; replies not received are dropped."""
        self.settle()
        self._sent.clear()

    # -- internals ---------------------------------------------------------------
    def _unread(self) -> _Sent | None:
        for entry in self._sent:
            if entry.outcome is None:
                return entry
        return None

    def _deliver(self, entries: list[_Sent]) -> None:
        """Send ``entries`` to the worker, starting one (and sending it everything
        unread) if the stream holds none.  A send that fails leaves the entry
        undelivered: the worker is gone, but the replies it wrote before can still be
        read, and the entry is sent to its successor once they are."""
        if self._worker is None:
            self._worker = self._pool.acquire(self._lane)
            entries = [e for e in self._sent if e.outcome is None]
            if entries:
                entries[0].started = time.monotonic()
        for entry in entries:
            entry.delivered = not self._gone and self._worker.send(entry.data)
            self._gone = not entry.delivered

    def _advance(self) -> None:
        """Read the next reply; if the stream cannot go on (no new worker could be
        started for the requests a lost one left), every unread request fails with
        that error, so each reply still goes to its own request."""
        try:
            self._read_next()
        except Exception as e:  # noqa: BLE001 - given to each request left unread
            for entry in self._sent:
                if entry.outcome is None:
                    entry.outcome = (True, e)
            self._drop_worker(lost=False)

    def _read_next(self) -> None:
        entry = self._unread()
        assert entry is not None and self._worker is not None
        if not entry.delivered:  # its worker went after answering all it was sent
            self._drop_worker(lost=True)
            self._deliver([])
            return
        left = None
        if entry.kill_after is not None:
            assert entry.started is not None
            left = entry.started + entry.kill_after - time.monotonic()
        try:
            entry.outcome = (False, self._worker.receive(left))
            entry.seconds = self._worker.handled_seconds
        except (WorkerKilled, WorkerDied) as e:
            entry.outcome = (True, e)
            entry.seconds = time.monotonic() - (entry.started or time.monotonic())
            self._drop_worker(lost=True)
        except Exception as e:  # noqa: BLE001 - the request's own error (a QueryError)
            entry.outcome = (True, e)
            entry.seconds = self._worker.handled_seconds
        following = self._unread()
        if self._worker is not None and self._worker.retiring:
            self._drop_worker(lost=False)
        if following is None:
            if self._worker is not None:
                self._pool.release(self._worker)
                self._worker = None
        elif self._worker is None:
            self._deliver([])  # a new worker, sent what the old one never started
        else:
            following.started = time.monotonic()

    def _drop_worker(self, *, lost: bool) -> None:
        worker, self._worker = self._worker, None
        if worker is None:
            return
        self._gone = False
        for entry in self._sent:
            entry.delivered = False
        if lost:
            self._pool.note_replaced()
        self._pool.release(worker)  # a dead or retiring worker is retired, not kept
