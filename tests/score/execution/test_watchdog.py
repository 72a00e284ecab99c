"""The watchdog interrupts each armed query at its own deadline, whatever order the
deadlines were armed in, and wakes its thread only when a deadline comes sooner than
its next wake-up."""

from __future__ import annotations

import threading
import time

from score.execution.engines.watchdog import RunState, Watchdog


class Connection:
    """Records when it was interrupted."""

    def __init__(self) -> None:
        self.interrupted = threading.Event()
        self.at: float | None = None

    def interrupt(self) -> None:
        self.at = time.monotonic()
        self.interrupted.set()


def _armed(dog: Watchdog, seconds: float) -> tuple[Connection, RunState, float]:
    connection = Connection()
    state = RunState(connection)
    deadline = time.monotonic() + seconds
    dog.arm(state, deadline)
    return connection, state, deadline


def test_a_later_deadline_armed_while_the_thread_sleeps_still_fires() -> None:
    dog = Watchdog()
    try:
        first, first_state, _ = _armed(dog, 0.2)
        time.sleep(0.05)  # the thread now sleeps until the first deadline
        second, _, second_deadline = _armed(dog, 0.4)  # later: no wake-up needed
        dog.disarm(first_state)  # the first query ended in time
        assert second.interrupted.wait(2.0)
        assert second.at is not None and second.at >= second_deadline
        assert second.at - second_deadline < 0.5
        assert not first.interrupted.is_set()
    finally:
        dog.close()


def test_a_sooner_deadline_wakes_the_thread() -> None:
    dog = Watchdog()
    try:
        _, slow_state, _ = _armed(dog, 30.0)  # the thread sleeps for 30 s
        time.sleep(0.05)
        fast, _, fast_deadline = _armed(dog, 0.1)
        assert fast.interrupted.wait(2.0)  # not 30 s later
        assert fast.at is not None and fast.at - fast_deadline < 0.5
        dog.disarm(slow_state)
    finally:
        dog.close()


def test_many_queries_in_a_row_each_end_in_time_and_none_fires() -> None:
    dog = Watchdog()
    try:
        connections = []
        for _ in range(200):  # queries under one limit: ever later deadlines
            connection, state, _ = _armed(dog, 0.3)
            connections.append(connection)
            assert not state.stop()
            dog.disarm(state)
        last, _, deadline = _armed(dog, 0.05)
        assert last.interrupted.wait(2.0)
        assert last.at is not None and last.at - deadline < 0.5
        assert not any(c.interrupted.is_set() for c in connections)
    finally:
        dog.close()
