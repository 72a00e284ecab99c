"""Ending the ``sqlgold`` process without Python's teardown, for a command that says it
left nothing to tear down.

Python's exit clears every module it imported; after ``sqlgold verify`` (sqlglot,
pyarrow, numpy and the checking machinery: some 400 modules) that takes about 60 ms,
more than a tenth of the editing loop's half-second target, to free memory the system
frees anyway.  A command whose work is done and whose executor is closed calls
:func:`allow`; the installed ``sqlgold`` script (:func:`curate.cli.run`) then flushes
the standard streams and ends the process at once with the command's exit code.
Nothing else changes: a command that does not call :func:`allow`, or a caller that
invokes the click group itself (tests through ``CliRunner``), exits as Python does.
"""

from __future__ import annotations

import os
import sys

_allowed = False


def allow() -> None:
    """Say this process holds nothing that needs tearing down: no open executor, no
    file being written, no thread still working."""
    global _allowed
    _allowed = True


def end(code: object) -> None:
    """End the process with ``code`` (a SystemExit's code) if a command allowed it and
    the code is a number (or None, meaning 0) and the streams flush; otherwise return,
    and the caller exits as Python does."""
    if not _allowed or not (code is None or isinstance(code, int)):
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):  # a closed pipe: let Python report it as it would
        return
    _remove_multiprocessing_folder()
    os._exit(code or 0)


def _remove_multiprocessing_folder() -> None:
    """Remove the temporary folder multiprocessing made for this process (the fork
    server's socket is there), which its exit handler would have removed: a verify
    ended this way left a ``pymp-*`` folder behind each time."""
    util = sys.modules.get("multiprocessing.util")
    if util is None:  # multiprocessing never used: no folder
        return
    import shutil

    shutil.rmtree(util.get_temp_dir(), ignore_errors=True)
