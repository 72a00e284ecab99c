"""``sqlgold`` run as a user runs it: a process of its own, its exit code, stdout and stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any


def sqlgold(*args: Any, timeout: float = 600, **kwargs: Any) -> subprocess.CompletedProcess:
    """``sqlgold ARGS`` in a new process (``python -m curate.cli``), its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "curate.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def one_line_error(done: subprocess.CompletedProcess, *parts: str) -> str:
    """The one line a refused command printed (exit code 1, no traceback), checked to
    name each of ``parts``."""
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def results(folder: Path) -> dict[str, dict[str, Any]]:
    """A run folder's results.jsonl by task id."""
    lines = (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["task_id"]: r for r in map(json.loads, lines)}
