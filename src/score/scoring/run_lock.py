"""One writer per run folder: ``score run`` holds a lock on ``DIR/run.lock`` while it
writes ``DIR``.

A second ``score run`` into the same folder (or a ``--resume`` started beside a run
still writing it) would append the same instances to ``results.jsonl`` twice; it fails
at once instead, naming the folder and the process that holds it.  The lock is
``fcntl.flock`` on the file: the kernel drops it when its holder ends, however it ends
(a kill included), so the file a killed run leaves behind blocks nobody; a run that ends
removes it.  :func:`check_unlocked` asks without taking anything or making the folder
(a refused run makes no output folder); :class:`RunLock` takes it.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> with RunLock(folder) as lock:
...     (folder / LOCK_FILE).read_text() == f"{os.getpid()}\\n"
True
>>> (folder / LOCK_FILE).exists()
False
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from score.errors import ScoringError

LOCK_FILE = "run.lock"


def _busy(folder: Path, lock_path: Path) -> ScoringError:
    try:
        holder = lock_path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        holder = ""
    who = f"process {holder}" if holder.isdigit() else "another process"
    return ScoringError(
        f"the run folder is being written by {who} (it holds {LOCK_FILE}); wait for that "
        "run to end, or choose another --out",
        path=str(folder),
    )


def check_unlocked(folder: str | Path) -> None:
    """Raise a ScoringError if a live process holds ``folder``'s lock; makes nothing."""
    folder = Path(folder)
    lock_path = folder / LOCK_FILE
    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return  # no lock file (or no folder): nobody writes there
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise _busy(folder, lock_path) from None
    finally:
        os.close(fd)  # closing drops the lock this check may have taken


class RunLock:
    """The lock of ``folder`` (which must exist), held from :meth:`acquire` to
    :meth:`release`; a ScoringError names the holder if another process has it."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_FILE
        self._fd: int | None = None

    def acquire(self) -> RunLock:
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise _busy(self.folder, self.path) from None
            # a holder that was ending may have removed the file we opened: locking
            # that orphan would lock nothing, so take the file now at the path instead
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._fd = fd
        return self

    def release(self) -> None:
        """Remove the lock file and drop the lock (removed first, while still held, so
        no other process can lock the file being removed and believe it holds it)."""
        if self._fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()
