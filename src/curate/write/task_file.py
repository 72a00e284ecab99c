"""Writing a curated task file: deterministic, atomic.

The format is :mod:`score.inputs.task_file`'s: a header line with the set hash, then the tasks
sorted by id, keys sorted, UTF-8 kept, one JSON object per line, so the same tasks
always give byte-identical files; files are written to a temporary name and renamed, so
a reader never sees half a file and a failed run loses nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from score.files import write_all_atomic, write_atomic
from score.inputs.task_file import task_file_text, task_line

__all__ = ["task_line", "write_files_atomic", "write_tasks", "write_text_atomic"]


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, on disk
    before the rename."""
    write_atomic(path, text, fsync=True)


def write_files_atomic(texts: Mapping[Path, str]) -> None:
    """Write several files so that either all are replaced or none is
    (:func:`score.files.write_all_atomic`): a failure (a folder that cannot be made, a
    full disk) leaves every target as it was."""
    write_all_atomic(texts)


def tasks_text(tasks: Iterable[dict[str, Any]], *, database_fingerprint: str | None = None) -> str:
    """The task file's text: the header with the set hash, then the tasks sorted by id."""
    return task_file_text(tasks, database_fingerprint=database_fingerprint)


def write_tasks(
    path: str | Path, tasks: Iterable[dict[str, Any]], *, database_fingerprint: str | None = None
) -> None:
    """Write ``tasks`` as a task file (header, then tasks sorted by id)."""
    write_text_atomic(path, tasks_text(tasks, database_fingerprint=database_fingerprint))
