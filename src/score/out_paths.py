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


# -- an output already there ------------------------------------------------------------
# One rule for every command that writes (docs/commands.md, "An output already there"):
# what a command made before from inputs still there is replaced, and the command says
# so; what holds work that cannot be made again for nothing (a scoring run, a generation,
# a release) is continued (--resume) or refused, never replaced; and nothing sqlgold did
# not make is written over or into.  The checks run before any work.


def _transient(entry: str) -> bool:
    """An entry a command's probe or atomic write leaves only for an instant (or a write
    killed halfway left: :func:`score.files.temporary_beside`)."""
    return entry.startswith(".sqlgold-write-check.") or (
        entry.startswith(".") and entry.endswith(".tmp")
    )


#: The most of a JSON file read to see whether sqlgold wrote it.
_MARKER_BYTES = 64 * 2**20


def sqlgold_format(path: Path, *, first_line: bool = False) -> str | None:
    """The ``format`` a sqlgold JSON file (or, with ``first_line``, a JSONL file's
    header) names, or None when ``path`` is no such file (another file, a folder, a FIFO,
    unreadable, larger than a sqlgold header or report).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "r.json"
    >>> _ = f.write_text('{"format": "sqlgold.comparison/1"}')
    >>> sqlgold_format(f), sqlgold_format(f.parent)
    ('sqlgold.comparison/1', None)
    """
    import json
    import stat

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        with open(path, "rb") as f:
            data = f.readline(_MARKER_BYTES + 1) if first_line else f.read(_MARKER_BYTES + 1)
        if len(data) > _MARKER_BYTES:
            return None
        value = json.loads(data)
    except (OSError, ValueError, RecursionError):
        return None
    found = value.get("format") if isinstance(value, dict) else None
    return found if isinstance(found, str) and found.startswith("sqlgold.") else None


def _refuse(path: Path, what: str, stage: str, found: str | None = None) -> SqlgoldError:
    there = f"holds {found}, which is not part of {what}" if found else f"is not {what}"
    return _fail(
        path,
        f"{there}: sqlgold replaces only what it wrote itself (choose another --out)",
        stage,
    )


def prior_file(path: str | Path, *, formats: tuple[str, ...], what: str, stage: str) -> bool:
    """Whether ``path`` holds an earlier output of this kind (a sqlgold JSON file, or a
    JSONL file with a header, whose format starts with one of ``formats``), to be
    replaced; False when nothing is there.  Anything else there is refused, naming it."""
    path = Path(path)
    if not os.path.lexists(path):
        return False
    found = sqlgold_format(path) or sqlgold_format(path, first_line=True)
    if found is not None and found.startswith(formats):
        return True
    raise _refuse(path, what, stage)


def prior_folder(
    path: str | Path,
    *,
    names: frozenset[str] | None,
    what: str,
    stage: str,
    marker: tuple[str, tuple[str, ...]] | None = None,
) -> bool:
    """Whether the folder ``path`` holds an earlier output of this kind, to be replaced
    (or written into again); False when it is absent or empty.  It may hold only
    ``names`` (and, with ``marker`` = (file, formats), that file must be a sqlgold file
    of one of those formats; with ``names`` None the marker alone says the folder is
    sqlgold's); anything else there is refused, naming the first entry that does not
    belong."""
    path = Path(path)
    if not path.is_dir():
        return False  # absent (check_output_dir says what is in the way of a folder)
    try:
        entries = sorted(e for e in os.listdir(path) if not _transient(e))
    except OSError as e:
        raise _fail(path, f"cannot list the folder: {e.strerror or e}", stage) from None
    if not entries:
        return False
    strangers = [e for e in entries if names is not None and e not in names]
    if strangers:
        raise _refuse(path, what, stage, found=repr(strangers[0]))
    if marker is not None:
        name, formats = marker
        found = sqlgold_format(path / name)
        if found is None or not found.startswith(formats):
            raise _refuse(path, what, stage, found=f"no {name} sqlgold wrote")
    return True
