"""Writing a curated task file: deterministic, atomic.

Tasks are sorted by id, keys sorted, UTF-8 kept, one JSON object per line, so the same
tasks always give byte-identical files; the file is written to a temporary name and
renamed, so a reader never sees half a file and a failed run loses nothing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def task_line(task: dict[str, Any]) -> str:
    """One task as its JSONL line.

    >>> task_line({"id": "a", "answerable": True})
    '{"answerable": true, "id": "a"}\\n'
    """
    return json.dumps(task, sort_keys=True, ensure_ascii=False) + "\n"


def write_text_atomic(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_tasks(path: str | Path, tasks: Iterable[dict[str, Any]]) -> None:
    """Write ``tasks`` sorted by id as a JSONL task file."""
    ordered = sorted(tasks, key=lambda t: t["id"])
    write_text_atomic(path, "".join(task_line(t) for t in ordered))
