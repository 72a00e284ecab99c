"""A record's reference answer run beside its gold, in a second query process.

The gold's checks (its run, order probe, tie checks, second run) and the reference
answer's run are independent executions; the answer's result is only compared once the
gold is kept.  Curation therefore sends the answer as soon as the record is read, on one
background thread of its own, and the executor gives that thread its own query process
(:class:`~score.execution.executor.Executor` is thread-safe): on two cores the answer
runs while the gold's checks do, instead of after them.

Nothing about the verdict changes: the answer is compared, and its drop decided, at the
same point and in the same order as when it ran after the gold; an answer whose gold is
dropped is run and its result discarded.  Each query runs under its own time and memory
limits in its own process, as every query does.
"""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor

from curate.reading.ahead import Reading
from curate.transpile.to_duckdb import Transpiled
from curate.verify.gold import Drop
from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult


class AnswerRuns:
    """Reference answers run one at a time, in order, on a thread beside the caller's."""

    def __init__(self, executor: Executor) -> None:
        self._executor = executor
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sqlgold-answer")

    def start(self, sql: str) -> Future[QueryResult | QueryError]:
        """Send ``sql`` now; its result (or the QueryError it ended with) when done."""
        return self._thread.submit(self._executor.try_execute, sql)

    def close(self, *, wait: bool = True) -> None:
        """Start no more answers; with ``wait``, wait for the one under way (its query
        process goes back to the pool), else it ends when its query does (closing the
        executor ends that at once)."""
        self._thread.shutdown(wait=wait, cancel_futures=True)


def start_answer(
    reading: Reading, runs: AnswerRuns | None
) -> tuple[Future[QueryResult | QueryError] | None, Transpiled | Drop | Exception | None]:
    """``reading``'s reference answer read (or the exception its reading raised, for the
    answer stage to raise; None when it has none) and, for one that was read, its run
    started now (None without ``runs``).  The answer stage decides its drops as before;
    an answer it drops was run for nothing."""
    rendered = reading.rendered
    if rendered is None or rendered.answer_sql is None:
        return None, None
    try:
        answer: Transpiled | Drop | Exception = reading.answer_reading()
    except Exception as e:  # noqa: BLE001 - raised again at the answer stage
        return None, e
    if runs is None or isinstance(answer, Drop):
        return None, answer
    return runs.start(answer.sql), answer
