"""The query process's side of the sandbox: open an engine, limit memory, handle requests.

:func:`serve` is the main function of a worker process started by
:mod:`score.execution.processes.sandbox`. It opens the engine (:mod:`score.execution.engines`), runs
a small parallel query so DuckDB's threads and their allocator arenas exist, then limits its own
address space (``RLIMIT_AS``) to what it uses at that point plus the memory limit, twice the
result-size cap and :data:`HEADROOM_BYTES`, and reports ready.  glibc's malloc arenas
are capped at four first (each reserves 64 MiB of address space; one per DuckDB thread
on a many-core machine would outgrow the limit).

Then it handles one request (:mod:`score.execution.processes.messages`) at a time until told to stop
or its parent goes away, or until its engine's connection cannot be trusted for another query
(``broken``): that reply is marked the last, and the process ends after it.  Whatever
a request raises becomes its reply (a :class:`~score.execution.result.QueryError`), so nothing a
query does ends the process except what cannot be caught, and that is the supervisor's
to handle; a :class:`~score.errors.DatabaseError` (the database went away: a Spark server
whose context stopped) is the last reply, and the caller raises it as the run's error.
A process that ran short of memory, or whose address space or resident
set grew past a share of the memory limit (:func:`worn`), ends after its reply the same
way, so every query runs in a process in the state of a new one, give or take that
share.  What it prints goes to a file (:mod:`score.execution.processes.query_process`).
Ctrl-C is ignored (the
scoring process handles it), and Linux kills the worker when its parent, the fork
server, ends.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import time
from dataclasses import dataclass
from multiprocessing import connection, reduction
from pathlib import Path
from typing import Any

from score.errors import DatabaseError, SqlgoldError
from score.execution.arrow_pandas import answer_without_pandas
from score.execution.engines import open_engine
from score.execution.guard import silence_sqlglot
from score.execution.processes.messages import Session, time_limit
from score.execution.result import QueryError
from score.execution.settings import ExecutorSettings

#: Address space a worker may add to what it uses once its engine is open, beyond the
#: memory limit and twice the result-size cap (Python objects, parse trees, pickling).
HEADROOM_BYTES = 256 * 2**20

#: The share of the memory limit a worker's peak address space or resident set may grow
#: by over its life before it is replaced (after the reply that found it grown).
WORN_SHARE = 0.125

#: What the error of a request that ran short of memory (or of stack) says.
_SHORT_OF_MEMORY = ("memory", "bad_alloc", "nested too deeply")

#: glibc's ``mallopt`` parameter for the number of malloc arenas, and the cap set.
M_ARENA_MAX = -8
MALLOC_ARENAS = 4

#: A small parallel query every new worker runs before measuring its address space.
WARM_UP = "SELECT count(*) FROM (SELECT DISTINCT i % 50000 FROM range(400000) t(i))"


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
    #: the session settings that bear on what a query means: those sqlgold fixes (the
    #: time zone) and, on a server, the server's own (DateStyle, IntervalStyle, ...)
    session: dict[str, str] | None = None


def serve(conn: connection.Connection, spec: WorkerSpec, output: str | None = None) -> None:
    """The worker's main loop: open the engine, limit memory, handle requests.  What
    it prints goes to the file ``output`` (emptied before each request), never to the
    terminal of the process that started it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    printed = _print_to(output)
    _die_with_parent()
    _few_malloc_arenas()
    silence_sqlglot()  # its warnings on a prediction are verdicts, not stderr lines
    # a query process holds no pandas object: pyarrow's first conversion of a Python
    # list (a PostgreSQL result) would import pandas only to ask, a quarter of a second
    answer_without_pandas()
    try:
        engine = open_engine(spec.db_path, spec.schema, spec.settings)
        session = Session(engine, spec.settings)
        # DuckDB's threads have allocated: their arenas exist now (an engine may name its
        # own warm-up query: PostgreSQL and Spark have nothing of DuckDB's)
        session.run(getattr(engine, "warm_up_sql", WARM_UP))
        limit = _limit_address_space(spec.settings)
        info = EngineInfo(
            engine.name,
            engine.schema,
            dict(engine.tables),
            engine.stored_fingerprint(),
            limit,
            dict(getattr(engine, "session_settings", {})),
        )
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which raises it
        _send(conn, ("fatal", _portable_error(e)))
        return
    _send(conn, ("ready", info))
    ready = _memory()
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            break
        begun = time.monotonic()  # its own time starts here, whenever the supervisor reads
        request = reduction.ForkingPickler.loads(data)
        if request is None:
            break
        _empty(printed)
        session.deadline = (
            time.monotonic() + time_limit(request, spec.settings) if request.timed else None
        )
        try:
            reply: tuple[str, Any] = ("ok", request.handle(session))
        except QueryError as e:
            reply = ("error", e)
        except DatabaseError as e:  # the database went away (a server that stopped): no
            # query's outcome, the caller's error; this process ends after saying so
            _send(conn, ("lost", _portable_error(e), True, time.monotonic() - begun))
            break
        except MemoryError:
            reply = ("error", QueryError("runtime_error", "out of memory (the memory limit)"))
        except RecursionError:
            reply = ("error", QueryError("runtime_error", "nested too deeply to handle"))
        except Exception as e:  # noqa: BLE001 - any failure is this request's outcome
            reply = ("error", QueryError("runtime_error", f"{type(e).__name__}: {e}"[:500]))
        # a connection that cannot be trusted, or a process that ran out of memory or
        # grew (what is left of its address space is not a new process's), ends after
        # the reply, which says so: the supervisor hands it no further request and has
        # started its replacement
        last = bool(getattr(engine, "broken", False)) or worn(reply, ready, spec.settings)
        _send(conn, (*reply, last, time.monotonic() - begun))
        if last:
            break
    engine.close()


def worn(reply: tuple[str, Any], ready: tuple[int, int], settings: ExecutorSettings) -> bool:
    """Whether this process may be in another state than a new one after ``reply``: the
    request ran out of memory (or of stack), or the process's address space or resident
    set, at their peaks, grew past :data:`WORN_SHARE` of the memory limit since it was
    ready (a query that held that much and gave it back leaves the process otherwise).

    >>> worn(("ok", None), (0, 0), ExecutorSettings(memory_limit="1GB"))  # grown from 0
    True
    >>> worn(("error", QueryError("timeout", "")), _memory(), ExecutorSettings())
    False
    """
    kind, value = reply
    if kind == "error" and isinstance(value, QueryError) and value.kind == "runtime_error":
        if any(hint in value.message.lower() for hint in _SHORT_OF_MEMORY):
            return True
    size, rss = _memory()
    allowed = settings.memory_bytes * WORN_SHARE
    return size - ready[0] > allowed or rss - ready[1] > allowed


def _memory() -> tuple[int, int]:
    """This process's largest address space and resident set so far, in bytes (0, 0 if
    unreadable): a query that held much and freed it leaves its mark here.  Read at
    every reply, from ``/proc/self/status`` kept open (read again in place: a fifth of
    the cost of opening it each time).

    >>> size, rss = _memory()
    >>> size >= rss > 0
    True
    """
    try:
        text = os.pread(_status_fd(), _STATUS_BYTES, 0)
        return _status_field(text, b"\nVmPeak:"), _status_field(text, b"\nVmHWM:")
    except (OSError, ValueError):
        return 0, 0


#: Bytes of ``/proc/self/status`` read (it is about 1.5 KB).
_STATUS_BYTES = 16384
_status: list[int] = []  # [pid, fd]: this process's own status file, opened once


def _status_fd() -> int:
    """The open ``/proc/self/status`` of this process (opened again in a forked child,
    where the inherited one would describe the parent)."""
    if not _status or _status[0] != os.getpid():
        _status[:] = [os.getpid(), os.open("/proc/self/status", os.O_RDONLY | os.O_CLOEXEC)]
    return _status[1]


def _status_field(text: bytes, name: bytes) -> int:
    """A ``kB`` field of a status text in bytes (0 if absent).

    >>> _status_field(b"Name: x\\nVmPeak:  2048 kB\\n", b"\\nVmPeak:")
    2097152
    """
    start = text.find(name)
    if start < 0:
        return 0
    start += len(name)
    return int(text[start : text.index(b"kB", start)]) * 1024


def _print_to(output: str | None) -> int | None:
    """Send this process's standard output and error to the file ``output``."""
    if output is None:
        return None
    fd = os.open(output, os.O_WRONLY | os.O_APPEND)
    for std in (1, 2):
        os.dup2(fd, std)
    os.close(fd)
    return 2


def _empty(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)


def _send(conn: connection.Connection, reply: tuple[Any, ...]) -> None:
    """Send a message (a request's reply: kind, value, whether it is the last, the
    seconds this process took over it); one that cannot be pickled in the memory left
    becomes an error, of the same shape."""
    try:
        data = reduction.ForkingPickler.dumps(reply)
    except MemoryError:
        data = reduction.ForkingPickler.dumps(
            ("error", QueryError("runtime_error", "out of memory sending the result"), *reply[2:])
        )
    except Exception as e:  # noqa: BLE001
        data = reduction.ForkingPickler.dumps(
            (
                "error",
                QueryError("runtime_error", f"cannot send the result: {e}"[:500]),
                *reply[2:],
            )
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


def _few_malloc_arenas() -> None:
    """Cap glibc's malloc arenas: each reserves 64 MiB of address space, and one per
    DuckDB thread on a many-core machine would outgrow the address-space limit."""
    try:
        import ctypes

        ctypes.CDLL(None).mallopt(M_ARENA_MAX, MALLOC_ARENAS)
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
