"""Re-running a check whenever the files it reads are saved (``sqlgold verify --watch``).

Files are polled (their size and modification time), which needs no extra dependency
and sees every way an editor saves: written in place, or written beside and renamed
over.  A file that is briefly missing while it is replaced is waited for.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d:
...     f = pathlib.Path(d) / "gold.sql"
...     _ = f.write_text("SELECT 1")
...     before = snapshot([f])
...     _ = f.write_text("SELECT 22")
...     changed_files(before, snapshot([f])) == [f]
True
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

Snapshot = dict[Path, tuple[int, int] | None]


def snapshot(paths: Sequence[Path]) -> Snapshot:
    """Each file's (size, modification time in ns), or None where it is missing."""
    out: Snapshot = {}
    for path in paths:
        try:
            st = os.stat(path)
        except OSError:
            out[path] = None
        else:
            out[path] = (st.st_size, st.st_mtime_ns)
    return out


def changed_files(before: Snapshot, after: Snapshot) -> list[Path]:
    """The files whose stamp changed and that exist now."""
    return [p for p, stamp in after.items() if stamp is not None and stamp != before.get(p)]


def watch(
    paths: Sequence[Path],
    check: Callable[[list[Path]], None],
    *,
    interval: float = 0.2,
    settle: float = 0.05,
    runs: int | None = None,
) -> None:
    """Call ``check([])`` once, then ``check(changed)`` after every save of ``paths``.

    Waits ``settle`` seconds after a change is seen so a save in progress is finished;
    returns after ``runs`` calls when given (tests), else runs until interrupted.
    """
    stamps = snapshot(paths)
    check([])
    done = 1
    while runs is None or done < runs:
        time.sleep(interval)
        now = snapshot(paths)
        changed = changed_files(stamps, now)
        if not changed:
            continue
        time.sleep(settle)
        stamps = snapshot(paths)
        check(changed)
        done += 1
