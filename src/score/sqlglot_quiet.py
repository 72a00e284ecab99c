"""sqlglot's warnings silenced for one thread's parse, not the process's.

sqlglot logs through the logger ``sqlglot`` ("... Falling back to parsing as a
'Command'").  Where such a warning is a verdict already (the guard's parse of a query) or
nobody's business (a page formatting SQL), it must not reach stderr; but raising the
logger's level for the parse would silence every other thread for as long, and curation
reads, checks and formats on several threads at once.  :func:`quiet` marks the calling
thread instead, and a filter on the logger drops the records that thread logs meanwhile.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_state = threading.local()


class _QuietThreads(logging.Filter):
    """Drops the records of a thread inside :func:`quiet`."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not getattr(_state, "depth", 0)


_FILTER = _QuietThreads()


@contextmanager
def quiet() -> Iterator[None]:
    """sqlglot's warnings logged by this thread within the block are dropped."""
    logging.getLogger("sqlglot").addFilter(_FILTER)  # once: a filter already there is kept
    _state.depth = getattr(_state, "depth", 0) + 1
    try:
        yield
    finally:
        _state.depth -= 1
