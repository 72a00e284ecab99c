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
* **state**: a worker whose connection cannot be trusted (a failed rollback), that ran
  short of memory, or that grew past a share of the memory limit exits after its reply
  and is replaced, so a query's outcome does not depend on what its process ran before;
* **replacement**: a worker killed, lost or retired is replaced at once, in the
  background, so its successor is usually ready before the next request comes; a
  request that comes sooner waits for it (as it would for a first worker) before its
  time limit starts.  A lane whose worker had to be killed or was lost keeps a spare
  from then on, started with that first replacement: a run that meets one query past
  its limit usually meets more (a hostile one), and the request after each later kill
  takes the spare at once instead of waiting for a start.

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

import threading
from multiprocessing import forkserver
from pathlib import Path
from typing import Any

from score.execution.processes.messages import QUERY_LANE
from score.execution.processes.query_process import (
    Worker,
    WorkerDied,
    WorkerKilled,
    describe_exit,
)
from score.execution.processes.worker import WORN_SHARE, EngineInfo, WorkerSpec

__all__ = ["Worker", "WorkerDied", "WorkerKilled", "WorkerPool", "WorkerSpec", "describe_exit"]

#: Retired workers' peak resident sets a pool remembers per lane (the largest ones).
_PEAKS_KEPT = 8


class _Lane:
    """The workers of one lane: the idle ones, how many are alive, the most alive at
    once, and the largest peak resident sets of those gone."""

    def __init__(self) -> None:
        self.idle: list[Worker] = []
        self.starting = 0  # replacements being started in the background
        self.spare = False  # keeps a spare worker: one of its workers was killed or lost
        self.alive = 0
        self.most_alive = 0
        self.busy: set[Worker] = set()  # handed out by acquire and not yet released
        self.most_busy = 0
        self.ready_kib = 0  # the largest resident set of a worker when it was ready
        # the most its idle workers may have held at once: each its resident set when
        # ready, and those that handled a request the growth that would retire them
        self.most_idle_kib = 0
        self.retired_peaks_kib: list[int] = []


class WorkerPool:
    """The workers of one executor; thread-safe.  A thread takes an idle worker of the
    request's lane or starts a new one, and gives it back after its request."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self._lanes: dict[str, _Lane] = {}
        self._lane_of: dict[Worker, str] = {}  # the live workers
        self._lock = threading.Lock()
        self._ready = threading.Condition(self._lock)  # a replacement is ready (or failed)
        self._closed = False
        self._replacing: list[threading.Thread] = []
        self.started = 0
        self.started_ahead = 0  # of those, replacements started before they were asked for
        self.replaced = 0  # workers killed or lost and replaced
        self.retired = 0  # workers that ended after a reply (worn, or untrusted)
        self.retired_cpu_seconds = 0.0
        self.first_info: EngineInfo | None = None

    def _start(self, lane: str, *, taken: bool = False) -> Worker:
        """A new worker of ``lane``; ``taken``: for the caller's request (busy, not idle)."""
        worker = Worker(self.spec)
        with self._lock:
            self.started += 1
            self._lane_of[worker] = lane
            held = self._lane_locked(lane)
            held.alive += 1
            held.most_alive = max(held.most_alive, held.alive)
            held.ready_kib = max(held.ready_kib, worker.ready_rss_kib)
            if not taken:
                self._note_idle_locked(lane)
            if self.first_info is None:
                self.first_info = worker.info
        return worker

    def acquire(self, lane: str = QUERY_LANE, *, fresh: bool = False) -> Worker:
        """An idle worker of ``lane`` (with ``fresh``, one never used where there is one),
        a replacement under way, or a new one."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the executor is closed")
            held = self._lane_locked(lane)
            while True:
                while held.idle:
                    at = -1
                    if fresh:  # the last idle one never used, if any
                        at = next(
                            (
                                i
                                for i in range(len(held.idle) - 1, -1, -1)
                                if not held.idle[i].requests
                            ),
                            -1,
                        )
                    worker = held.idle.pop(at)
                    if worker.alive:
                        self._take_locked(held, worker)
                        self._note_idle_locked(lane)
                        return worker
                    self._retire_locked(worker)
                if not held.starting or self._closed:
                    break
                self._ready.wait()  # a replacement on its way: sooner than a new one
            if self._closed:
                raise RuntimeError("the executor is closed")
        return self._start_taken(lane)

    def _start_taken(self, lane: str) -> Worker:
        """A new worker of ``lane``, busy with the caller's request."""
        worker = self._start(lane, taken=True)
        with self._lock:
            self._take_locked(self._lanes[lane], worker)
            self._note_idle_locked(lane)
        return worker

    @staticmethod
    def _take_locked(held: _Lane, worker: Worker) -> None:
        held.busy.add(worker)
        held.most_busy = max(held.most_busy, len(held.busy))

    def _note_idle_locked(self, lane: str) -> None:
        """Raise ``lane``'s ``most_idle_kib`` to what its idle workers may hold now, past
        those the bound's busy slots already cover (:meth:`peak_rss_by_lane` sums the
        largest peaks of as many workers as were ever busy at once: with fewer busy now,
        the free slots cover as many idle ones, the heaviest first).  Each idle worker
        holds at most its resident set when ready (a spare, a replacement started ahead:
        never used) plus, if it handled a request, the growth that would have retired it
        (:data:`~score.execution.processes.worker.WORN_SHARE` of the memory limit).  A
        worker killed or ending is not counted: its replacement starts only once it has
        been reaped (:meth:`_start_ahead`), and its peak is among the peaks."""
        held = self._lanes[lane]
        worn = int(self.spec.settings.memory_bytes * WORN_SHARE // 1024)
        holding = sorted(
            (
                held.ready_kib + (worn if w.requests else 0)
                for w, name in self._lane_of.items()
                if name == lane and w.alive and w not in held.busy
            ),
            reverse=True,
        )
        covered = held.most_busy - len(held.busy)
        held.most_idle_kib = max(held.most_idle_kib, sum(holding[covered:]))

    def alive(self, lane: str) -> int:
        """Workers of ``lane`` alive or being started."""
        with self._lock:
            held = self._lane_locked(lane)
            return held.alive + held.starting

    def start_idle(self, count: int, lane: str = QUERY_LANE) -> None:
        """Start workers of ``lane`` until ``count`` of them are alive, the new ones left
        idle: ``count`` threads then each find one ready instead of waiting for a start."""
        while True:
            with self._lock:
                if self._closed or self._lane_locked(lane).alive >= count:
                    return
            self.release(self._start(lane))

    def _replace(self, lane: str, gone: Worker) -> bool:
        """Close ``gone`` and start a worker of ``lane`` in its place, in the background
        (and the lane's spare, the first time one of its workers was killed or lost);
        False (nothing done) once the pool is closed."""
        with self._lock:
            if self._closed:
                return False
            held = self._lane_locked(lane)
            starts = 1
            if not gone.retiring and not held.spare:  # killed or lost: keep a spare
                held.spare = True
                starts = 2
            held.starting += starts
            thread = threading.Thread(
                target=self._start_ahead,
                args=(lane, gone, starts),
                name="sqlgold-replace",
                daemon=True,
            )
            self._replacing = [t for t in self._replacing if t.is_alive()] + [thread]
        thread.start()
        return True

    def _start_ahead(self, lane: str, gone: Worker | None, starts: int) -> None:
        if gone is not None:
            self._close(gone)
        for _ in range(starts):
            worker = None
            try:
                worker = self._start(lane)
            except Exception:  # noqa: BLE001 - the next acquire starts one and says why not
                pass
            with self._lock:
                held = self._lanes[lane]
                held.starting -= 1
                if worker is not None:
                    self.started_ahead += 1
                    if not self._closed:
                        held.idle.insert(0, worker)  # taken after the ones already idle
                self._ready.notify_all()
            if worker is not None and self._closed:
                self._close(worker)

    def start_ahead(self, lane: str, count: int) -> None:
        """Start ``count`` more workers of ``lane`` in the background, at once (one thread
        each), each left idle when ready: the requests that will need them find them
        started while the caller did other work, and one that comes sooner waits for
        the first of them rather than starting its own."""
        if count < 1:
            return
        with self._lock:
            if self._closed:
                return
            self._lane_locked(lane).starting += count
            threads = [
                threading.Thread(
                    target=self._start_ahead,
                    args=(lane, None, 1),
                    name="sqlgold-start",
                    daemon=True,
                )
                for _ in range(count)
            ]
            self._replacing = [t for t in self._replacing if t.is_alive()] + threads
        for thread in threads:
            thread.start()

    def _lane_locked(self, lane: str) -> _Lane:
        held = self._lanes.get(lane)
        if held is None:
            held = self._lanes[lane] = _Lane()
        return held

    def release(self, worker: Worker) -> None:
        """Take a worker back after a request: idle if it can take another, else
        retired and replaced, both in the background (a killed worker is reaped there,
        not on the time of the call that had it killed)."""
        with self._lock:
            if worker in self._lane_of:
                self._lanes[self._lane_of[worker]].busy.discard(worker)
                self._note_idle_locked(self._lane_of[worker])
            if worker.alive and not self._closed and worker in self._lane_of:
                self._lanes[self._lane_of[worker]].idle.append(worker)
                self._ready.notify_all()  # a thread waiting for a replacement takes it
                return
            lane = self._lane_of.get(worker)
            if worker.retiring:
                self.retired += 1
        if lane is None or not self._replace(lane, worker):
            self._close(worker)

    def _close(self, worker: Worker) -> None:
        worker.close()  # a worker ended (or ending) is reaped, its output file closed
        with self._lock:
            self._retire_locked(worker)

    def _retire_locked(self, worker: Worker) -> None:
        lane = self._lane_of.pop(worker, None)
        if lane is None:
            return
        held = self._lanes[lane]
        held.alive -= 1
        held.busy.discard(worker)
        self.retired_cpu_seconds += worker.used_cpu_seconds
        peaks = sorted([*held.retired_peaks_kib, worker.peak_rss_kib], reverse=True)
        held.retired_peaks_kib = peaks[:_PEAKS_KEPT]

    def call(
        self, request: Any, kill_after: float | None, *, lane: str = QUERY_LANE, fresh: bool = False
    ) -> Any:
        """Handle ``request`` on a worker of ``lane`` (a newly started one with ``fresh``)."""
        worker = self.acquire(lane, fresh=fresh)
        if fresh and worker.requests:  # one started ahead and never used is fresh already
            worker.close()
            with self._lock:
                self._retire_locked(worker)
            worker = self._start_taken(lane)
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
        """Per lane, in KiB, a bound on what that lane held at once: the sum of the
        largest peak resident sets of as many of its workers (live or gone) as it ever
        had handling requests together, and the most its other workers (idle: a spare, a
        replacement started ahead) may have held at once (:meth:`_note_idle_locked`)."""
        with self._lock:
            lanes = {
                name: (held.most_busy, held.most_idle_kib, list(held.retired_peaks_kib))
                for name, held in self._lanes.items()
            }
            live = list(self._lane_of.items())
        for worker, name in live:
            lanes[name][2].append(max(worker.rss_kib(), worker.peak_rss_kib))
        return {
            name: sum(sorted(peaks, reverse=True)[:busy]) + idle
            for name, (busy, idle, peaks) in sorted(lanes.items())
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
            self._ready.notify_all()
            replacing = list(self._replacing)
        for thread in replacing:  # each closes the worker it started
            thread.join()
        with self._lock:
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
