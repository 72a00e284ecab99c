"""Output paths checked before any work is done, so a bad ``--out`` costs nothing.

A command that writes files checks each destination first: its folder can be made (no
regular file stands where a folder must be) and a file can be written where it will be
made (not a read-only or virtual file system such as ``/proc``).  Only then does it
curate or score; a failure is one :class:`~score.errors.SqlgoldError` naming the path
and the stage, never a traceback after an hour of work.  Checking makes nothing: the
folders are made when the first file is written, so a command that fails later (a bad
predictions file, runs that cannot be compared) leaves no empty folder behind.

>>> import tempfile, pathlib
>>> base = pathlib.Path(tempfile.mkdtemp())
>>> (base / "file").write_text("x")
1
>>> check_output_file(base / "file" / "tasks.jsonl", stage="curate")
Traceback (most recent call last):
...
score.errors.SqlgoldError: [curate] ...file/tasks.jsonl: ...file is a file, not a folder
"""

from __future__ import annotations

import os
from pathlib import Path

from score.errors import SqlgoldError


def _fail(path: Path, why: str, stage: str) -> SqlgoldError:
    return SqlgoldError(why, stage=stage, path=str(path))


def _blocking_file(folder: Path) -> Path | None:
    """The nearest existing ancestor of ``folder`` (itself included) that is not a folder."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return None if candidate.is_dir() else candidate
    return None


def _check_writable_folder(folder: Path, shown: Path, stage: str) -> None:
    """Prove ``folder`` can be made and written in, making nothing: the nearest existing
    folder on its way must take a new entry (a probe file, removed at once)."""
    blocking = _blocking_file(folder)
    if blocking is not None:
        raise _fail(shown, f"{blocking} is a file, not a folder", stage)
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    probe = existing / f".sqlgold-write-check.{os.getpid()}"
    try:
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        if existing == folder:
            raise _fail(shown, f"cannot write in {folder}: {e.strerror or e}", stage) from None
        raise _fail(
            shown, f"cannot make the folder {folder}: {e.strerror or e} in {existing}", stage
        ) from None


def check_output_dir(path: str | Path, *, stage: str) -> Path:
    """Prove the folder ``path`` can be made (if it is not there) and written in."""
    path = Path(path)
    _check_writable_folder(path, path, stage)
    return path


def check_output_file(path: str | Path, *, stage: str) -> Path:
    """Check that the file ``path`` can be written: its folder can be made, no folder is
    in its place."""
    path = Path(path)
    if path.is_dir():
        raise _fail(path, "a folder is in the way", stage)
    _check_writable_folder(path.parent, path, stage)
    return path
