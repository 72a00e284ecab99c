"""Sandbox workers: every query runs in a child process that can be abandoned.

A worker is a process that hosts one engine (:mod:`score.engines`) and handles one
request (:mod:`score.requests`) at a time.  It is supervised by the process that
scores:

* **time**: the worker's own watchdog interrupts DuckDB at the request's time limit;
  a request still running later (DuckDB could not be interrupted, or Python code such
  as the parser is still busy) is ended by killing the worker at
  :attr:`~score.settings.ExecutorSettings.kill_after_seconds`, and a new worker takes
  its place;
* **memory**: after opening its engine a worker limits its own address space
  (``RLIMIT_AS``) to what it uses then plus the memory limit, twice the result-size
  cap and 256 MiB of headroom, so list and string functions that DuckDB's
  ``memory_limit`` does not track fail with an out-of-memory error instead of growing;
  a worker that dies anyway (killed from outside, a crash) is that query's
  ``runtime_error`` and is replaced;
* **state**: a worker whose connection cannot be trusted (a failed rollback) exits
  after its reply and is replaced.

Workers are forked from multiprocessing's fork server, which imports sqlgold's
scoring modules once, so a replacement costs the engine's open (tens of ms) rather
than a Python start.  Workers never import the parent's ``__main__``.  A pool holds
the workers of one executor: a thread takes an idle worker or starts one, so N
threads use N workers.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import resource
import signal
import threading
import time
from dataclasses import dataclass
from multiprocessing import connection, forkserver, popen_forkserver, reduction, spawn
from multiprocessing.context import ForkServerProcess, set_spawning_popen
from pathlib import Path
from typing import Any

from .engines import open_engine
from .errors import DatabaseError, SqlgoldError
from .requests import Session
from .result import QueryError
from .settings import ExecutorSettings

#: Address space a worker may add to what it uses once its engine is open, beyond the
#: memory limit and twice the result-size cap (Python objects, parse trees, pickling).
HEADROOM_BYTES = 256 * 2**20

#: Seconds a new worker may take to open its engine before it counts as failed.
START_TIMEOUT = 300.0

#: Modules the fork server imports once, so workers start without importing anything.
PRELOAD = [
    "score.sandbox",
    "score.engines.duckdb",
    "score.answer",
    "score.engines.postgres",
    "score.engines.postgres_sql",
    "psycopg",
]


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker opens: the database, the CDM schema and the query settings."""

    db_path: str
    schema: str | None
    settings: ExecutorSettings


@dataclass(frozen=True)
class EngineInfo:
    """What a ready worker reports about its engine."""

    name: str
    schema: str
    tables: dict[str, str]
    stored_fingerprint: str | None
    address_limit: int | None  # bytes of RLIMIT_AS, None if it could not be set


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


# -- the worker process -----------------------------------------------------------


def serve(conn: connection.Connection, spec: WorkerSpec) -> None:
    """The worker's main loop: open the engine, limit memory, handle requests."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _die_with_parent()
    try:
        engine = open_engine(spec.db_path, spec.schema, spec.settings)
        session = Session(engine, spec.settings)
        session.run("SELECT 1")  # every thread and allocator arena DuckDB needs exists now
        limit = _limit_address_space(spec.settings)
        info = EngineInfo(
            engine.name, engine.schema, dict(engine.tables), engine.stored_fingerprint(), limit
        )
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
        _send(conn, ("fatal", _portable_error(e)))
        return
    _send(conn, ("ready", info))
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            break
        if request is None:
            break
        session.deadline = (
            time.monotonic() + spec.settings.timeout_seconds if request.timed else None
        )
        try:
            reply: tuple[str, Any] = ("ok", request.handle(session))
        except QueryError as e:
            reply = ("error", e)
        except MemoryError:
            reply = ("error", QueryError("runtime_error", "out of memory (the memory limit)"))
        except RecursionError:
            reply = ("error", QueryError("runtime_error", "nested too deeply to handle"))
        except Exception as e:  # noqa: BLE001 - any failure is this request's outcome
            reply = ("error", QueryError("runtime_error", f"{type(e).__name__}: {e}"[:500]))
        _send(conn, reply)
        if getattr(engine, "broken", False):
            break
    engine.close()


def _send(conn: connection.Connection, reply: tuple[str, Any]) -> None:
    """Send a reply; one that cannot be pickled in the memory left becomes an error."""
    try:
        data = reduction.ForkingPickler.dumps(reply)
    except MemoryError:
        data = reduction.ForkingPickler.dumps(
            ("error", QueryError("runtime_error", "out of memory sending the result"))
        )
    except Exception as e:  # noqa: BLE001
        data = reduction.ForkingPickler.dumps(
            ("error", QueryError("runtime_error", f"cannot send the result: {e}"[:500]))
        )
    with contextlib.suppress(OSError):
        conn.send_bytes(data)


def _portable_error(e: BaseException) -> tuple[str, str, str | None]:
    if isinstance(e, SqlgoldError):
        return (type(e).__name__, e.message, e.path)
    return (type(e).__name__, f"{type(e).__name__}: {e}", None)


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when the fork server (its parent) ends."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _vm_size() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _limit_address_space(settings: ExecutorSettings) -> int | None:
    base = _vm_size()
    if base is None:
        return None
    limit = base + settings.memory_bytes + 2 * settings.max_result_bytes + HEADROOM_BYTES
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        return None
    return limit


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
        self.sentinel, w = forkserver.connect_to_new_process(self._fds)
        _parent_w = os.dup(w)
        self.finalizer = multiprocessing.util.Finalize(
            self, multiprocessing.util.close_fds, (_parent_w, self.sentinel)
        )
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _WorkerProcess(ForkServerProcess):
    @staticmethod
    def _Popen(process_obj: Any) -> _Popen:
        return _Popen(process_obj)


_preload_lock = threading.Lock()
_preloaded = False


def _ensure_preload() -> None:
    global _preloaded
    with _preload_lock:
        if not _preloaded:
            forkserver.set_forkserver_preload(PRELOAD)
            _preloaded = True


class Worker:
    """One worker process, seen from the process that supervises it."""

    def __init__(self, spec: WorkerSpec) -> None:
        _ensure_preload()
        self.spec = spec
        ctx = multiprocessing.get_context("forkserver")
        self._conn, child = ctx.Pipe(duplex=True)
        self.process = _WorkerProcess(target=serve, args=(child, spec), daemon=True)
        self.process.start()
        child.close()
        self.peak_rss_kib = 0
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
                path=self.spec.db_path,
            )
        kind, value = message
        if kind == "fatal":
            self.process.join(5)
            name, text, path = value
            if name == "DatabaseError":
                raise DatabaseError(text, path=path or self.spec.db_path)
            raise DatabaseError(f"cannot open the database: {text}", path=self.spec.db_path)
        return value

    @property
    def alive(self) -> bool:
        return self.process.is_alive() and not self._conn.closed

    def call(self, request: Any, kill_after: float | None) -> Any:
        """Send ``request``; its value, or the QueryError it raised.  Raises WorkerKilled
        when it had to be killed after ``kill_after`` seconds, WorkerDied if it died."""
        try:
            self._conn.send(request)
            if kill_after is not None and not self._conn.poll(kill_after):
                self.kill()
                raise WorkerKilled()
            kind, value = self._conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._note_rss()
            self._conn.close()
            self.process.join(5)
            raise WorkerDied(self.process.exitcode) from None
        if kind == "error":
            raise value
        return value

    def rss_kib(self, field: str = "VmHWM") -> int:
        """A /proc status field of the worker in KiB (0 if it cannot be read)."""
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        except (OSError, ValueError):
            pass
        return 0

    def _note_rss(self) -> None:
        self.peak_rss_kib = max(self.peak_rss_kib, self.rss_kib())

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


class WorkerPool:
    """The workers of one executor; thread-safe.  A thread takes an idle worker or
    starts a new one, and gives it back after its request."""

    def __init__(self, spec: WorkerSpec) -> None:
        self.spec = spec
        self._idle: list[Worker] = []
        self._live: set[Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.started = 0
        self.replaced = 0  # workers killed or lost and replaced
        self.retired_peak_rss_kib = 0
        self.first_info: EngineInfo | None = None

    def _start(self) -> Worker:
        worker = Worker(self.spec)
        with self._lock:
            self.started += 1
            self._live.add(worker)
            if self.first_info is None:
                self.first_info = worker.info
        return worker

    def acquire(self) -> Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the executor is closed")
            while self._idle:
                worker = self._idle.pop()
                if worker.alive:
                    return worker
                self._retire_locked(worker)
        return self._start()

    def release(self, worker: Worker) -> None:
        with self._lock:
            if worker.alive and not self._closed:
                self._idle.append(worker)
                return
        if worker.alive:
            worker.close()
        with self._lock:
            self._retire_locked(worker)

    def _retire_locked(self, worker: Worker) -> None:
        self._live.discard(worker)
        self.retired_peak_rss_kib = max(self.retired_peak_rss_kib, worker.peak_rss_kib)

    def call(self, request: Any, kill_after: float | None, *, fresh: bool = False) -> Any:
        """Handle ``request`` on a worker (a newly started one with ``fresh``)."""
        worker = self.acquire()
        if fresh:
            worker.close()
            with self._lock:
                self._retire_locked(worker)
            worker = self._start()
        try:
            return worker.call(request, kill_after)
        except (WorkerKilled, WorkerDied):
            with self._lock:
                self.replaced += 1
            raise
        finally:
            self.release(worker)

    def peak_rss_kib(self) -> int:
        """The largest peak resident set of any worker this pool has had, in KiB."""
        with self._lock:
            live = list(self._live)
            peak = self.retired_peak_rss_kib
        return max([peak, *(w.rss_kib() for w in live), *(w.peak_rss_kib for w in live)])

    def close(self) -> None:
        with self._lock:
            self._closed = True
            workers = list(self._live)
            self._idle.clear()
        for worker in workers:
            worker.close()
        with self._lock:
            for worker in workers:
                self._retire_locked(worker)
