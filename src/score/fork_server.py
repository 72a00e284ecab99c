"""The fork server the query processes are forked from (:mod:`score.sandbox`), started
as early as a command knows it will query a database.

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

#: What every worker needs, whatever the engine.
BASE_PRELOAD = ("score.query_worker", "score.engines.duckdb", "score.answer")
#: Added for a PostgreSQL database.
POSTGRES_PRELOAD = ("score.engines.postgres", "score.engines.postgres_sql", "psycopg")

_lock = threading.Lock()
_started = False


def preload_for(db: object) -> list[str]:
    """The modules to preload for database ``db`` (a path or URL; None: any engine).

    >>> preload_for("x.duckdb")[-1], preload_for("postgresql://u@h/db")[-1]
    ('score.answer', 'psycopg')
    >>> preload_for(None)[-1]
    'psycopg'
    """
    modules = list(BASE_PRELOAD)
    if db is None or (isinstance(db, str) and db.startswith(("postgresql://", "postgres://"))):
        modules += POSTGRES_PRELOAD
    return modules


def start(db: object = None) -> None:
    """Start the fork server (once per process) with the modules ``db`` needs, imported
    from the same ``sys.path`` as this process (Python 3.11's fork server does not apply
    it itself, so it would import a different copy of sqlgold than a caller that put one
    first).  Returns at once: the server imports while the caller goes on."""
    global _started
    with _lock:
        if _started:
            return
        forkserver.set_forkserver_preload(preload_for(db))
        saved = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.pathsep.join(p or os.getcwd() for p in sys.path)
        try:
            forkserver.ensure_running()
        finally:
            if saved is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = saved
        _started = True
