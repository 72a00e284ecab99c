"""Records checked two at a time, their outcomes taken in order.

Checking a record (its gold's runs and checks, its reference answer's, the tier and the
schema) waits on query processes most of its time.  While one record waits, the next
one's checks run on a thread of their own, and the executor gives that thread its own
query process (:class:`~score.execution.executor.Executor` is thread-safe): on two cores
a record's Python work overlaps the other's queries.

Nothing about a record's outcome depends on the order its checks ran in: each query runs
in its own process under its own limits, a record's checks read only its own reading
(read in order, by :mod:`curate.reading.ahead`), and outcomes are taken, and progress
reported, in the records' order.  A database that went away ends the run as it would
with one record at a time.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

from curate.reading.ahead import Reading
from curate.sources.records import SourceRecord

#: Records being checked at once.
CHECKING = 2

T = TypeVar("T")


def checked_in_order(
    records: Sequence[SourceRecord],
    readings: Sequence[Future[Reading] | None],
    check: Callable[[SourceRecord, Future[Reading] | None], T],
    progress: Callable[[SourceRecord], None] | None = None,
) -> list[T]:
    """``check`` of every record (with its reading), :data:`CHECKING` at a time, in the
    records' order; ``progress`` after each, in that order."""
    pool = ThreadPoolExecutor(max_workers=CHECKING, thread_name_prefix="sqlgold-check")
    queued: deque[tuple[SourceRecord, Future[T]]] = deque()
    done: list[T] = []

    def take() -> None:
        record, future = queued.popleft()
        done.append(future.result())
        if progress:
            progress(record)

    try:
        for record, ahead in zip(records, readings, strict=True):
            queued.append((record, pool.submit(check, record, ahead)))
            if len(queued) >= CHECKING:
                take()
        while queued:
            take()
    except BaseException:
        # the run ends (a database gone, Ctrl-C): what is queued is not started, what
        # runs ends with its query (the caller closes the executor)
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return done
