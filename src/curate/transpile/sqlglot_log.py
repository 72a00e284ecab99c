"""sqlglot's warnings go through ``logging``: shown on stderr as log lines, or not at all.

sqlglot logs a warning when it falls back to a generic command ("contains unsupported
syntax") or cannot write something; with no logging set up Python prints such warnings
raw on stderr, also under ``-q`` and from every worker process.  The CLI calls
:func:`route_sqlglot_warnings` once; worker processes repeat it with the same setting
(:func:`current_setting`).

>>> route_sqlglot_warnings(quiet=True); current_setting()
True
"""

from __future__ import annotations

import logging
import sys

LOGGER = "sqlglot"
_setting: bool | None = None  # None: never set up (library use: Python's defaults)


class _Handler(logging.StreamHandler):
    """The handler this module adds (so a second call replaces it); writes to the stderr
    of the moment, so a redirected stderr (a test's) is never written to after it closes."""

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def route_sqlglot_warnings(*, quiet: bool) -> None:
    """Send sqlglot's log records to stderr as ``sqlglot: ...`` lines, or drop them if quiet."""
    global _setting
    logger = logging.getLogger(LOGGER)
    for handler in [h for h in logger.handlers if isinstance(h, _Handler | logging.NullHandler)]:
        logger.removeHandler(handler)
    logger.propagate = False
    if quiet:
        logger.addHandler(logging.NullHandler())
    else:
        handler = _Handler()
        handler.setFormatter(logging.Formatter("sqlglot: %(levelname)s: %(message)s"))
        logger.addHandler(handler)
    _setting = quiet


def current_setting() -> bool | None:
    """How this process routes sqlglot's warnings: quiet, shown, or never set up (None)."""
    return _setting
