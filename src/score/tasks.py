"""Loading a task set to score: a curated ``<name>_tasks.jsonl`` file.

Every line is checked against ``schemas/task.schema.json``; a task format version this
code does not know is refused (the format is versioned so a reader never guesses).
An error names the file, the line and the task id.

A task with several question languages yields one scored :class:`Instance` per
language (seed 004: each language is its own scored instance).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError
from .schemas import validation_errors

TASK_FORMAT_VERSIONS = frozenset({"1.0"})


@dataclass(frozen=True)
class Instance:
    """One scored unit: a task asked in one language."""

    task: dict[str, Any]
    language: str

    @property
    def task_id(self) -> str:
        return self.task["id"]

    @property
    def key(self) -> tuple[str, str]:
        return (self.task["id"], self.language)

    @property
    def question(self) -> str:
        return self.task["questions"][self.language]


def check_task(task: Any, *, path: str | None = None, line: int | None = None) -> dict:
    """Return ``task`` if it is a valid task record, else raise InputError saying where."""
    task_id = task.get("id") if isinstance(task, dict) else None
    if isinstance(task, dict) and task.get("schema_version") not in TASK_FORMAT_VERSIONS:
        raise InputError(
            f"task format {task.get('schema_version')!r} is not one this sqlgold reads "
            f"({', '.join(sorted(TASK_FORMAT_VERSIONS))}); upgrade sqlgold or re-curate",
            stage="tasks",
            path=path,
            line=line,
            task_id=task_id,
        )
    problems = validation_errors("task", task)
    if problems:
        raise InputError(
            "; ".join(problems[:3])
            + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""),
            stage="tasks",
            path=path,
            line=line,
            task_id=task_id,
        )
    return task


def load_tasks(path: str | Path) -> list[dict[str, Any]]:
    """The task records of a curated JSONL file, in file order, each validated."""
    path = Path(path)
    if not path.is_file():
        raise InputError("no such task file", stage="tasks", path=str(path))
    tasks: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if not text.strip():
                continue
            try:
                task = json.loads(text)
            except json.JSONDecodeError as e:
                raise InputError(
                    f"not JSON: {e.msg}", stage="tasks", path=str(path), line=number
                ) from None
            check_task(task, path=str(path), line=number)
            if task["id"] in seen:
                raise InputError(
                    f"duplicate task id (first on line {seen[task['id']]})",
                    stage="tasks",
                    path=str(path),
                    line=number,
                    task_id=task["id"],
                )
            seen[task["id"]] = number
            tasks.append(task)
    if not tasks:
        raise InputError("the task file has no tasks", stage="tasks", path=str(path))
    return tasks


def instances(tasks: Iterable[dict[str, Any]]) -> list[Instance]:
    """Every (task, language) instance, tasks in order and languages sorted."""
    return [Instance(task, lang) for task in tasks for lang in sorted(task["questions"])]
