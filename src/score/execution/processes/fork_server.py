"""The fork server the query processes are forked from (:mod:`score.execution.processes.sandbox`),
started as early as a command knows it will query a database.

Starting it does not wait for it: the server imports sqlgold's engine modules in its own
process while the command goes on importing its own, so on two cores the two imports
overlap instead of adding up (``sqlgold verify`` of a trivial pair spent most of its
wall time on them).  This module imports nothing heavy for that reason.  The server is
started once per process.  A command that knows its database preloads what that
engine needs (``start(db)``); otherwise (a library caller's first executor) every
engine's modules are preloaded, as a process may open several.  A worker whose engine
was not preloaded imports it itself.
"""

from __future__ import annotations

import os
import sys
import threading
from multiprocessing import forkserver

#: What every worker needs, whatever the engine.  sqlglot loads a dialect's parser and
#: generator on first use: the guard's DuckDB dialect is preloaded too, or every
#: worker's first query would import it (17 ms here, a third of ``sqlgold verify``'s
#: checking time).
BASE_PRELOAD = (
    "score.execution.processes.worker",
    "score.execution.engines.duckdb",
    "score.scoring.answer",
    "sqlglot.dialects.duckdb",
)
#: Added for a PostgreSQL database.
POSTGRES_PRELOAD = (
    "score.execution.engines.postgres",
    "score.execution.engines.postgres_sql",
    "psycopg",
    "sqlglot.dialects.postgres",
)

#: NumPy's OpenBLAS starts a thread per core when NumPy is imported (pyarrow imports it),
#: and those threads spin for a while: on two cores they took the CPU the server's own
#: imports and the command's needed (``sqlgold verify`` of a trivial pair: 0.50 s, 0.44 s
#: with one thread).  No worker does linear algebra, so the server runs with one BLAS
#: thread unless the caller set the variable itself.
BLAS_THREADS = "OPENBLAS_NUM_THREADS"

_lock = threading.Lock()
_started = False


def preload_for(db: object) -> list[str]:
    """The modules to preload for database ``db`` (a path or URL; None: any engine).

    >>> preload_for("x.duckdb")[-1], preload_for("postgresql://u@h/db")[-1]
    ('sqlglot.dialects.duckdb', 'sqlglot.dialects.postgres')
    >>> "psycopg" in preload_for(None), "psycopg" in preload_for("x.duckdb")
    (True, False)
    """
    modules = list(BASE_PRELOAD)
    if db is None or (isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))):
        modules += POSTGRES_PRELOAD
    return modules


def start(db: object = None) -> None:
    """Start the fork server (once per process) with the modules ``db`` needs, imported
    from the same ``sys.path`` as this process (Python 3.11's fork server does not apply
    it itself, so it would import a different copy of sqlgold than a caller that put one
    first) and with one BLAS thread (:data:`BLAS_THREADS`).  Returns at once: the server
    imports while the caller goes on."""
    global _started
    with _lock:
        if _started:
            return
        forkserver.set_forkserver_preload(preload_for(db))
        server_env = {
            "PYTHONPATH": os.pathsep.join(p or os.getcwd() for p in sys.path),
            BLAS_THREADS: os.environ.get(BLAS_THREADS, "1"),
        }
        saved = {name: os.environ.get(name) for name in server_env}
        os.environ.update(server_env)
        try:
            forkserver.ensure_running()
        finally:
            for name, value in saved.items():
                if value is None:
                    del os.environ[name]
                else:
                    os.environ[name] = value
        _started = True
