"""Loading a task set to score: a curated ``<name>_tasks.jsonl`` file or a release folder.

Every task is checked against ``schemas/task.schema.json``; a task format version this
code does not know is refused (the format is versioned so a reader never guesses).
An error names the file, the line and the task id.  A release folder (written by
``sqlgold publish``) is read from its Parquet files and always checked against its
manifest; a JSONL file is checked against a manifest when one is given.  A task set
whose items no longer match the manifest is refused, naming the items that changed.

A task with several question languages yields one scored :class:`Instance` per
language (seed 004: each language is its own scored instance).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import InputError
from .jsonl import numbered_json_file
from .release_rows import read_rows, row_to_task
from .schemas import validation_errors
from .task_manifest import read_manifest, verify_tasks

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


#: The config of a release folder that holds the tasks (``tasks/<split>.parquet``).
RELEASE_TASKS_CONFIG = "tasks"
RELEASE_SPLITS = ("train", "test")


def load_tasks(path: str | Path, *, manifest: str | Path | None = None) -> list[dict[str, Any]]:
    """The tasks of a JSONL task file (in file order) or a release folder (train, then
    test), each validated; checked against ``manifest`` (a release's manifest.json or
    its folder), which a release folder always is against its own."""
    path = Path(path)
    if path.is_dir():
        tasks, _ = read_release(path)
        manifest = manifest if manifest is not None else path
    else:
        tasks = _read_jsonl(path)
    if manifest is not None:
        verify_tasks(tasks, read_manifest(manifest), path=str(path))
    return tasks


def read_release(folder: str | Path) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """A release folder's tasks (train, then test) and its split (split name -> ids)."""
    folder = Path(folder)
    found = read_manifest(folder)
    tasks: list[dict[str, Any]] = []
    for rel in found["files"]:
        if rel.startswith(f"{RELEASE_TASKS_CONFIG}/"):
            for row in read_rows(folder / rel):
                tasks.append(check_task(row_to_task(row), path=str(folder / rel)))
    if not tasks:
        raise InputError("the release holds no tasks", stage="tasks", path=str(folder))
    splits = {name: list(found["split"].get(name, [])) for name in RELEASE_SPLITS}
    return tasks, splits


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise InputError("no such task file", stage="tasks", path=str(path))
    tasks: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    try:
        for number, task, error in numbered_json_file(path):
            if error is not None:
                raise InputError(error, stage="tasks", path=str(path), line=number)
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
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", stage="tasks", path=str(path)) from e
    if not tasks:
        raise InputError("the task file has no tasks", stage="tasks", path=str(path))
    return tasks


def instances(tasks: Iterable[dict[str, Any]]) -> list[Instance]:
    """Every (task, language) instance, tasks in order and languages sorted."""
    return [Instance(task, lang) for task in tasks for lang in sorted(task["questions"])]
