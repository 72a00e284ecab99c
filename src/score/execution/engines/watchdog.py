"""One thread that interrupts every query past its deadline.

A thread per query (``threading.Timer``) cost about half a millisecond to start, as
much as a small OMOP query takes to run; a :class:`Watchdog` sleeps until the nearest
deadline and is started on first use.  Arming it wakes its thread only when the new
deadline comes before the thread's next wake-up: queries under one time limit arrive
with ever later deadlines, so the thread wakes about once per time limit, not once
per query (each wake-up took the interpreter lock from the query's own thread).
What it interrupts is a :class:`RunState`: a connection (anything with an
``interrupt()`` method) only while its query runs.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol


class Interruptible(Protocol):
    def interrupt(self) -> None: ...


class RunState:
    """Interrupt a connection only while its query runs; report whether it fired."""

    def __init__(self, connection: Interruptible) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self._running = True
        self.fired = False

    def interrupt(self) -> None:
        with self._lock:
            if self._running:
                self.fired = True
                self._connection.interrupt()

    def stop(self) -> bool:
        """The query is over: no interrupt after this; True if one fired."""
        with self._lock:
            self._running = False
            return self.fired


class Watchdog:
    """Interrupts each armed :class:`RunState` at its deadline (``time.monotonic()``)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._deadlines: dict[RunState, float] = {}
        self._thread: threading.Thread | None = None
        self._closed = False
        self._wake_at = 0.0  # when the thread wakes next, unless notified sooner

    def arm(self, state: RunState, deadline: float) -> None:
        with self._cond:
            self._deadlines[state] = deadline
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="sqlgold-timeout", daemon=True
                )
                self._thread.start()
            elif deadline < self._wake_at:
                self._cond.notify()

    def disarm(self, state: RunState) -> None:
        with self._cond:
            self._deadlines.pop(state, None)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify()

    def _loop(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                due = [s for s, d in self._deadlines.items() if d <= now]
                for state in due:
                    del self._deadlines[state]
                    state.interrupt()
                wait = max(min(self._deadlines.values(), default=now + 60.0) - now, 0.001)
                self._wake_at = now + wait
                self._cond.wait(timeout=wait)
