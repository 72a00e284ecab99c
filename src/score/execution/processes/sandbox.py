"""Sandbox workers: every query runs in a child process that can be abandoned.

A worker is a process that hosts one engine (:mod:`score.execution.engines`) and handles
one request (:mod:`score.execution.processes.messages`) at a time (its side is
:mod:`score.execution.processes.worker`).  It is supervised by the process that scores:

* **time**: the worker's own watchdog interrupts DuckDB at the request's time limit;
  a request still running later (DuckDB could not be interrupted, or Python code such
  as the parser is still busy) is ended by killing the worker at
  :attr:`~score.execution.settings.ExecutorSettings.kill_after_seconds`, and a new worker takes
  its place;
* **memory**: a worker limits its own address space once its engine is open, so list
  and string functions that DuckDB's ``memory_limit`` does not track fail with an
  out-of-memory error instead of growing; a worker that dies anyway (killed from
  outside, a crash) is that query's ``runtime_error`` and is replaced;
* **state**: a worker whose connection cannot be trusted (a failed rollback) exits
  after its reply and is replaced.

Workers are forked from multiprocessing's fork server
(:mod:`score.execution.processes.fork_server`), which imports sqlgold's scoring modules
once, so a replacement costs the engine's open (tens of ms) rather than a Python start.
Workers never import the parent's ``__main__``.  A pool holds the workers of one
executor: a thread takes an idle worker or starts one, so N threads use N workers.  A
worker belongs to one **lane** (a kind of request: see
:func:`score.execution.processes.messages.lane`) for its whole life, so the process that
parsed an answer never becomes the one that ran a memory-hungry query, and a bound on the
memory held at once is the sum, per lane, of the largest peaks of as many workers as that
lane ever had alive together.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import threading
from multiprocessing import forkserver, popen_forkserver, reduction, spawn
from multiprocessing.context import ForkServerProcess, set_spawning_popen
from pathlib import Path
from typing import Any

from score.errors import DatabaseError
from score.execution.engines.kinds import database_label
from score.execution.processes import fork_server
from score.execution.processes.messages import QUERY_LANE
from score.execution.processes.worker import EngineInfo, WorkerSpec, serve

#: Seconds a new worker may take to open its engine before it counts as failed.
START_TIMEOUT = 300.0

#: Retired workers' peak resident sets a pool remembers per lane (the largest ones).
_PEAKS_KEPT = 8


class WorkerKilled(Exception):
    """The worker overran its request's deadline and was killed."""


class WorkerDied(Exception):
    """The worker process ended while handling a request."""

    def __init__(self, exitcode: int | None) -> None:
        self.exitcode = exitcode
        super().__init__(describe_exit(exitcode))


def describe_exit(exitcode: int | None) -> str:
    """How a worker ended, for a reason line.

    >>> describe_exit(-9)
    'the query process was killed (signal 9, SIGKILL; the system may be out of memory)'
    """
    if exitcode is None:
        return "the query process ended"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = "unknown"
        hint = "; the system may be out of memory" if -exitcode == signal.SIGKILL else ""
        return f"the query process was killed (signal {-exitcode}, {name}{hint})"
    return f"the query process exited with status {exitcode}"


# -- the supervising side -----------------------------------------------------------


class _Popen(popen_forkserver.Popen):
    """multiprocessing's fork-server launch, minus the parent's ``__main__``: a worker
    needs only sqlgold's modules, and a caller's script without a main guard must not
    run again in every worker."""

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        prep_data.pop("init_main_from_name", None)
        prep_data.pop("init_main_from_path", None)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        # multiprocessing's own fork-server start, which has no public form: these are
        # the attributes and helpers its Popen uses
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        _parent_w = os.dup(w)
        close_fds = multiprocessing.util.close_fds  # type: ignore[attr-defined]
        self.finalizer = multiprocessing.util.Finalize(self, close_fds, (_parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _Popen:
        return _Popen(process_obj)


class Worker:
    """One worker process, seen from the process that supervises it."""

    def __init__(self, spec: WorkerSpec) -> None:
        fork_server.start()  # no-op when a command started it for its database
        self.spec = spec
        ctx = multiprocessing.get_context("forkserver")
        self._conn, child = ctx.Pipe(duplex=True)
        self.process = _WorkerProcess(target=serve, args=(child, spec), daemon=True)
        self.process.start()
        child.close()
        self.peak_rss_kib = 0
        self.used_cpu_seconds = 0.0
        self.retiring = False  # its last reply said it ends: it takes no other request
        self.info = self._await_ready()

    def _await_ready(self) -> EngineInfo:
        try:
            ready = self._conn.poll(START_TIMEOUT)
            message = self._conn.recv() if ready else None
        except (EOFError, OSError):
            message = None
        if message is None:
            self.kill()
            raise DatabaseError(
                f"the query process did not start ({describe_exit(self.process.exitcode)})",
                path=database_label(self.spec.db_path),
            )
        kind, value = message
        if kind == "fatal":
            self.process.join(5)
            name, text, path = value
            if name == "DatabaseError":
                raise DatabaseError(text, path=path or database_label(self.spec.db_path))
            raise DatabaseError(
                f"cannot open the database: {text}", path=database_label(self.spec.db_path)
            )
        return value

    @property
    def alive(self) -> bool:
        """Can take a request: running, connected, and not ending after its last reply."""
        return not self.retiring and self.process.is_alive() and not self._conn.closed

    def call(self, request: Any, kill_after: float | None) -> Any:
        """Send ``request``; its value, or the QueryError it raised.  Raises WorkerKilled
        when it had to be killed after ``kill_after`` seconds, WorkerDied if it died."""
        self.send(reduction.ForkingPickler.dumps(request))  # if it is gone, receive says so
        return self.receive(kill_after)

    def send(self, data: bytes | memoryview) -> bool:
        """Send a pickled request without waiting for its reply (the worker reads its
        requests in order); False if the worker is gone (the replies it sent before it
        went can still be received)."""
        try:
            self._conn.send_bytes(data)
        except (OSError, ValueError):
            return False
        return True

    def receive(self, kill_after: float | None) -> Any:
        """The reply to the oldest request sent and not yet answered, as :meth:`call`
        gives it; the worker is killed if none comes within ``kill_after`` seconds."""
        try:
            if kill_after is not None and not self._conn.poll(max(kill_after, 0.0)):
                self.kill()
                raise WorkerKilled()
            kind, value, self.retiring = self._conn.recv()
        except (EOFError, OSError):
            self._lost()
        if kind == "error":
            raise value
        return value

    def _lost(self) -> None:
        self._note_rss()
        self._conn.close()
        self.process.join(5)
        raise WorkerDied(self.process.exitcode) from None

    def rss_kib(self, field: str = "VmHWM") -> int:
        """A /proc status field of the worker in KiB (0 if it cannot be read)."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def cpu_seconds(self) -> float:
        """CPU seconds (user + system) the worker has used so far (0 if unreadable)."""
        try:
            fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            return 0.0

    def _note_rss(self) -> None:
        self.peak_rss_kib = max(self.peak_rss_kib, self.rss_kib())
        self.used_cpu_seconds = max(self.used_cpu_seconds, self.cpu_seconds())

    def kill(self) -> None:
        self._note_rss()
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        self.process.join(10)
        self._conn.close()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not."""
        self._note_rss()
        if not self._conn.closed:
            with contextlib.suppress(OSError, ValueError):
                self._conn.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.kill()
        self._conn.close()


class _Lane:
    """The workers of one lane: the idle ones, how many are alive, the most alive at
    once, and the largest peak resident sets of those gone."""

    def __init__(self) -> None:
        self.idle: list[Worker] = []
        self.alive = 0
        self.most_alive = 0
        self.retired_peaks_kib: list[int] = []


class WorkerPool:
    """The workers of one executor; thread-safe.  A thread takes an idle worker of the
    request's lane or starts a new one, and gives it back after its request."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self._lanes: dict[str, _Lane] = {}
        self._lane_of: dict[Worker, str] = {}  # the live workers
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0
        self.replaced = 0  # workers killed or lost and replaced
        self.retired_cpu_seconds = 0.0
        self.first_info: EngineInfo | None = None

    def _start(self, lane: str) -> Worker:
        worker = Worker(self.spec)
        with self._lock:
            self.started += 1
            self._lane_of[worker] = lane
            held = self._lane_locked(lane)
            held.alive += 1
            held.most_alive = max(held.most_alive, held.alive)
            if self.first_info is None:
                self.first_info = worker.info
        return worker

    def acquire(self, lane: str = QUERY_LANE) -> Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the executor is closed")
            idle = self._lane_locked(lane).idle
            while idle:
                worker = idle.pop()
                if worker.alive:
                    return worker
                self._retire_locked(worker)
        return self._start(lane)

    def _lane_locked(self, lane: str) -> _Lane:
        held = self._lanes.get(lane)
        if held is None:
            held = self._lanes[lane] = _Lane()
        return held

    def release(self, worker: Worker) -> None:
        with self._lock:
            if worker.alive and not self._closed and worker in self._lane_of:
                self._lanes[self._lane_of[worker]].idle.append(worker)
                return
        if worker.alive:
            worker.close()
        with self._lock:
            self._retire_locked(worker)

    def _retire_locked(self, worker: Worker) -> None:
        lane = self._lane_of.pop(worker, None)
        if lane is None:
            return
        held = self._lanes[lane]
        held.alive -= 1
        self.retired_cpu_seconds += worker.used_cpu_seconds
        peaks = sorted([*held.retired_peaks_kib, worker.peak_rss_kib], reverse=True)
        held.retired_peaks_kib = peaks[:_PEAKS_KEPT]

    def call(
        self, request: Any, kill_after: float | None, *, lane: str = QUERY_LANE, fresh: bool = False
    ) -> Any:
        """Handle ``request`` on a worker of ``lane`` (a newly started one with ``fresh``)."""
        worker = self.acquire(lane)
        if fresh:
            worker.close()
            with self._lock:
                self._retire_locked(worker)
            worker = self._start(lane)
        try:
            return worker.call(request, kill_after)
        except (WorkerKilled, WorkerDied):
            self.note_replaced()
            raise
        finally:
            self.release(worker)

    def note_replaced(self) -> None:
        """Count a worker killed at its time limit or lost (its lane starts another)."""
        with self._lock:
            self.replaced += 1

    def peak_rss_kib(self) -> int:
        """A bound, in KiB, on the resident memory this pool's workers held at once: the
        sum of :meth:`peak_rss_by_lane`."""
        return sum(self.peak_rss_by_lane().values())

    def peak_rss_by_lane(self) -> dict[str, int]:
        """Per lane, in KiB, the sum of the largest peak resident sets of as many of its
        workers (live or gone) as it ever had alive together: a bound on what that lane
        held at once."""
        with self._lock:
            lanes = {
                name: (held.most_alive, list(held.retired_peaks_kib))
                for name, held in self._lanes.items()
            }
            live = list(self._lane_of.items())
        for worker, name in live:
            lanes[name][1].append(max(worker.rss_kib(), worker.peak_rss_kib))
        return {
            name: sum(sorted(peaks, reverse=True)[:most])
            for name, (most, peaks) in sorted(lanes.items())
        }

    def cpu_seconds(self) -> float:
        """CPU seconds used by every worker this pool has had."""
        with self._lock:
            live = list(self._lane_of)
            done = self.retired_cpu_seconds
        return done + sum(w.cpu_seconds() for w in live)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = list(self._lane_of)
            for held in self._lanes.values():
                held.idle.clear()
        for worker in workers:
            worker.close()
        with self._lock:
            for worker in workers:
                self._retire_locked(worker)


def fork_server_rss_kib() -> int:
    """The peak resident set of this process's fork server, in KiB (0 if none)."""
    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if not pid:
        return 0
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0
