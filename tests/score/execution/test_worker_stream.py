"""Requests sent ahead to one query process (score.execution.processes.stream, Executor.stream):
answered in order, each still under its own time limit, and a query process that is
killed or lost takes only its own request with it."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from score.execution.executor import Executor, ExecutorSettings
from score.execution.processes.messages import Execute
from score.execution.processes.stream import SEND_AHEAD_BYTES
from score.execution.result import QueryError

UNINTERRUPTIBLE = "SELECT length(lpad('x', 200000000, 'y')) AS n"  # about 3 s, in one call
CROSS = "SELECT count(*) AS n FROM cdm.measurement a CROSS JOIN cdm.measurement b"


def _select(n: int) -> Execute:
    return Execute(f"SELECT {n} AS n")


def _value(result) -> int:
    return result.rows()[0][0]


def test_replies_come_in_the_order_sent_from_one_process(omop_db: Path):
    with Executor(omop_db) as ex, ex.stream() as stream:
        for n in range(5):
            stream.send(_select(n))
        assert stream.pending == 5
        assert all(sent.delivered for sent in stream._stream._sent)  # none waited
        assert [_value(stream.receive()) for _ in range(5)] == list(range(5))
        assert ex.workers_started == 1


def test_a_query_error_is_its_own_request_s(omop_db: Path):
    with Executor(omop_db) as ex, ex.stream() as stream:
        stream.send(_select(1))
        stream.send(Execute("SELECT nosuch FROM cdm.person"))
        stream.send(_select(3))
        assert _value(stream.receive()) == 1
        with pytest.raises(QueryError) as caught:
            stream.receive()
        assert caught.value.kind == "catalog_error"
        assert _value(stream.receive()) == 3
        assert ex.workers_started == 1


def test_a_killed_request_leaves_those_sent_after_it_to_a_new_process(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex, ex.stream() as stream:
        stream.send(Execute(UNINTERRUPTIBLE))
        stream.send(_select(2))
        stream.send(_select(3))
        with pytest.raises(QueryError) as caught:
            stream.receive()
        assert caught.value.kind == "timeout" and "process was ended" in caught.value.message
        assert [_value(stream.receive()), _value(stream.receive())] == [2, 3]
    for thread in list(ex._pool._replacing):
        thread.join()
    assert ex.workers_replaced == 1 and ex.workers_started == 3  # the replacement, a spare


def test_the_time_limit_of_a_request_sent_ahead_starts_when_it_can_start(omop_db: Path):
    """Sixteen uninterruptible queries of about 0.25 s each on an idle machine, sent at
    once, under a 2 s time limit (killed at 3 s): each finishes inside its own limit,
    though the last finishes about 4 s after it was sent.  The margin (each query an
    eighth of the limit) keeps it so on a machine several times slower."""
    settings = ExecutorSettings(timeout_seconds=2.0, memory_limit="1GB")
    quarter_second = Execute("SELECT length(lpad('x', 12500000, 'y')) AS n")
    with Executor(omop_db, settings=settings) as ex, ex.stream() as stream:
        for _ in range(16):
            stream.send(quarter_second)
        assert [_value(stream.receive()) for _ in range(16)] == [12500000] * 16
        assert ex.workers_replaced == 0


def test_a_process_that_dies_takes_only_its_own_request(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(timeout_seconds=20)) as ex:
        (worker,) = ex._pool._lane_of
        with ex.stream() as stream:
            timer = threading.Timer(0.5, lambda: os.kill(worker.process.pid, signal.SIGKILL))
            timer.start()
            stream.send(Execute(CROSS))
            stream.send(_select(2))
            with pytest.raises(QueryError) as caught:
                stream.receive()
            timer.join()
            assert caught.value.kind == "runtime_error" and "SIGKILL" in caught.value.message
            assert _value(stream.receive()) == 2
        assert ex.workers_replaced == 1


def test_a_process_lost_while_idle_is_replaced_without_failing_a_request(omop_db: Path):
    with Executor(omop_db) as ex, ex.stream() as stream:
        stream.send(_select(1))
        assert _value(stream.receive()) == 1
        (worker,) = ex._pool._lane_of
        os.kill(worker.process.pid, signal.SIGKILL)
        worker.process.join(5)
        stream.send(_select(2))
        assert _value(stream.receive()) == 2


def test_a_large_request_waits_for_the_replies_pending(omop_db: Path):
    """A worker blocked writing a large reply and a caller blocked writing a large
    request would wait on each other: a large request is sent with nothing pending."""
    big = Execute("SELECT 2 AS n -- " + "x" * (4 * SEND_AHEAD_BYTES))  # over a pipe's buffer
    with Executor(omop_db) as ex, ex.stream() as stream:
        stream.send(Execute("SELECT repeat('x', 1000) AS s FROM range(5000)"))  # 5 MB
        stream.send(big)
        first = stream._stream._sent[0]
        assert first.outcome is not None  # read before the large request went
        assert stream.receive().num_rows == 5000
        with pytest.raises(QueryError, match="over the limit"):
            stream.receive()


def test_settle_gives_the_process_back_for_a_blocking_call(omop_db: Path):
    with Executor(omop_db) as ex, ex.stream() as stream:
        stream.send(_select(1))
        stream.settle()
        assert stream.pending == 1
        assert ex.execute("SELECT 5 AS n").rows() == [(5,)]  # the same process
        assert _value(stream.receive()) == 1
        assert ex.workers_started == 1


def test_a_stream_takes_only_query_lane_requests(omop_db: Path):
    from score.scoring.answer import Answer, PrepareAnswer

    with Executor(omop_db) as ex, ex.stream() as stream:
        with pytest.raises(ValueError, match="query-lane"):
            stream.send(PrepareAnswer(Answer(output="SELECT 1")))
        with pytest.raises(RuntimeError, match="no request is pending"):
            stream.receive()


def test_when_no_new_process_can_start_each_request_gets_its_own_reply(omop_db: Path):
    """A killed process's successor cannot start: the killed request is still its
    timeout, those sent after it fail with the start's error, one each, and nothing
    shifts a reply onto the wrong request."""
    from score.errors import DatabaseError

    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex, ex.stream() as stream:
        stream.send(Execute(UNINTERRUPTIBLE))
        stream.send(_select(2))
        stream.send(_select(3))
        real = ex._pool.acquire

        def cannot_start(lane):
            raise DatabaseError("the query process did not start")

        ex._pool.acquire = cannot_start
        with pytest.raises(QueryError, match="process was ended"):
            stream.receive()
        for _ in range(2):
            with pytest.raises(DatabaseError, match="did not start"):
                stream.receive()
        with pytest.raises(DatabaseError):
            stream.send(_select(4))
        assert stream.pending == 0
        ex._pool.acquire = real
        stream.send(_select(5))
        assert _value(stream.receive()) == 5
