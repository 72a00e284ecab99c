"""One query process seen from the process that supervises it (:class:`Worker`).

A worker is started from multiprocessing's fork server
(:mod:`score.execution.processes.fork_server`) without the parent's ``__main__``, and
its side runs :func:`score.execution.processes.worker.serve`.  What it prints (DuckDB's
``terminate called ...`` before an abort, say) never reaches the user's terminal: its
standard output and error go to a file of its own, unlinked once it is ready and emptied
before each request, and the last lines of it are the reason given when the process
dies (:class:`WorkerDied`).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import signal
import tempfile
import threading
from multiprocessing import forkserver, popen_forkserver, reduction, spawn
from multiprocessing.context import ForkServerProcess, set_spawning_popen
from pathlib import Path
from typing import Any

from score.errors import DatabaseError
from score.execution.engines.kinds import database_label
from score.execution.processes import fork_server
from score.execution.processes.worker import EngineInfo, WorkerSpec, serve

#: Seconds a new worker may take to open its engine before it counts as failed.
START_TIMEOUT = 300.0

#: Bytes of a dead worker's output read for its reason, and the characters kept.
OUTPUT_TAIL_BYTES = 4096
OUTPUT_TAIL_CHARS = 300


class WorkerKilled(Exception):
    """The worker overran its request's deadline and was killed."""


class WorkerDied(Exception):
    """The worker process ended while handling a request."""

    def __init__(self, exitcode: int | None, said: str = "") -> None:
        self.exitcode = exitcode
        self.said = said  # the last lines it printed, if any
        super().__init__(describe_exit(exitcode) + (f": {said}" if said else ""))


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
        self._ends = threading.Lock()  # held while the pipe or the output file is closed
        fd, output = tempfile.mkstemp(prefix="sqlgold-query-", suffix=".out")
        self._output = os.fdopen(fd, "rb")  # what the worker prints, read when it dies
        self.peak_rss_kib = 0
        self.used_cpu_seconds = 0.0
        self.retiring = False  # its last reply said it ends: it takes no other request
        self.requests = 0  # sent to it so far (none: it is as new as a fresh start)
        #: the seconds the last request received took in the worker, from when it read
        #: the request to its reply (when the supervisor reads the reply plays no part)
        self.handled_seconds = 0.0
        try:
            self.process = _WorkerProcess(target=serve, args=(child, spec, output), daemon=True)
            self.process.start()
            child.close()
            self.info = self._await_ready()
            self.ready_rss_kib = self.rss_kib("VmRSS")  # what it holds before any request
        except BaseException:
            self._output.close()
            raise
        finally:
            with contextlib.suppress(OSError):
                os.unlink(output)  # open in both processes: nothing is left behind

    def said(self) -> str:
        """The last lines the worker printed while handling its last request (it empties
        its output before each), at most :data:`OUTPUT_TAIL_CHARS` characters."""
        with contextlib.suppress(OSError, ValueError):
            size = os.fstat(self._output.fileno()).st_size
            self._output.seek(max(0, size - OUTPUT_TAIL_BYTES))
            text = self._output.read(OUTPUT_TAIL_BYTES).decode("utf-8", "replace")
            lines = [line.strip() for line in text.splitlines() if line.strip()]
            return " / ".join(lines[-3:])[-OUTPUT_TAIL_CHARS:]
        return ""

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
        self.requests += 1
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
                self.kill(wait=False)  # reaped when it is closed, not on the caller's time
                raise WorkerKilled()
            kind, value, self.retiring, self.handled_seconds = self._conn.recv()
        except (EOFError, OSError):
            self._lost()
        if kind == "error":
            raise value
        if kind == "lost":  # the database went away: the run's error, not a query's outcome
            _, text, path = value
            raise DatabaseError(text, path=path or database_label(self.spec.db_path))
        return value

    def _lost(self) -> None:
        self._note_rss()
        self._close_pipe()
        self.process.join(5)
        said = self.said()
        self._close_ends()
        raise WorkerDied(self.process.exitcode, said) from None

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

    def kill(self, *, wait: bool = True) -> None:
        """End the worker with SIGKILL; with ``wait``, also reap it (:meth:`close` does)."""
        self._note_rss()
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        if wait:
            self.process.join(10)
        self._close_ends()

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not."""
        self._note_rss()
        if not self._conn.closed:
            with contextlib.suppress(OSError, ValueError):
                self._conn.send(None)
        self.process.join(2)
        if self.process.is_alive():
            self.kill()
        self._close_ends()

    def _close_pipe(self) -> None:
        with self._ends:
            self._conn.close()

    def _close_ends(self) -> None:
        """Close the pipe and the output file, once: the pool's close kills a worker that
        a lane's thread may be reading, and that thread, finding it gone, closes them too
        (without the lock both could close the same descriptor, and one of them failed
        with EBADF, the error a run stopped by SIGTERM or Ctrl-C then ended with)."""
        with self._ends:
            self._conn.close()
            self._output.close()
