"""Loading a task set to score: a curated ``<name>_tasks.jsonl`` file or a release folder.

Every task is checked against ``schemas/task.schema.json``; a task format version this
code does not know is refused (the format is versioned so a reader never guesses).
An error names the file, the line and the task id.  A task file's tasks must match the
set hash in its header (:mod:`score.inputs.task_file`).  A release folder (written by
``sqlgold publish``) is read from its Parquet files and always checked against its
manifest; a JSONL file is checked against a manifest when one is given.  A task set
whose items no longer match the manifest is refused, naming the items that changed.

A task with several question languages yields one scored :class:`Instance` per
language (seed 004: each language is its own scored instance).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.errors import InputError
from score.inputs.release_rows import read_rows, row_to_task
from score.inputs.task_file import TASK_FORMAT_VERSIONS, check_set_hash, check_task, read_task_file
from score.inputs.task_manifest import read_manifest, set_hash, verify_tasks
from score.inputs.validated_files import ValidatedFiles

__all__ = [
    "TASK_FORMAT_VERSIONS",
    "Instance",
    "TaskSet",
    "check_task",
    "instances",
    "load_tasks",
    "open_task_set",
    "read_release",
]


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


#: The config of a release folder that holds the tasks (``tasks/<split>.parquet``).
RELEASE_TASKS_CONFIG = "tasks"
RELEASE_SPLITS = ("train", "test")


@dataclass(frozen=True)
class TaskSet:
    """A task set to score and what it says about itself.

    ``verified_fingerprint`` is the fingerprint of the data its golds were verified on
    (from the task file's header or the release manifest; None when unknown);
    ``splits`` is the published split (split name -> ids) of a release, or of the
    release named by ``--manifest``, else None (the split is then computed).
    """

    tasks: list[dict[str, Any]]
    path: str
    verified_fingerprint: str | None = None
    splits: dict[str, list[str]] | None = None
    #: the set hash of ``tasks`` (:func:`score.inputs.task_manifest.set_hash`), once
    #: computed: a task file's is checked against its header when it is read
    set_sha256: str | None = None

    def set_hash(self) -> str:
        """The set hash of the tasks (computed at most once)."""
        if self.set_sha256 is None:
            object.__setattr__(self, "set_sha256", set_hash(self.tasks))
        return self.set_sha256  # type: ignore[return-value]


def open_task_set(
    path: str | Path,
    *,
    manifest: str | Path | None = None,
    validated: ValidatedFiles | None = None,
) -> TaskSet:
    """The tasks of a task file (in file order, its set hash checked) or a release folder
    (train, then test), each validated (a task file whose bytes ``validated`` knows
    passed is not validated against the schema again); checked against ``manifest`` (a
    release's manifest.json or its folder), which a release folder always is against
    its own."""
    path = Path(path)
    header = None
    splits = None
    if path.is_dir():
        tasks, splits = read_release(path)
        manifest = manifest if manifest is not None else path
    else:
        header, tasks = read_task_file(path, check_set=False, validated=validated)
    fingerprint = header.get("database_fingerprint") if header else None
    if manifest is not None:  # first, as it names the items that changed
        found = read_manifest(manifest)
        verify_tasks(tasks, found, path=str(path))
        fingerprint = (found.get("database") or {}).get("fingerprint") or fingerprint
        split = found.get("split") or {}
        splits = {name: list(split.get(name, [])) for name in RELEASE_SPLITS}
    set_sha256 = None
    if header is not None:
        check_set_hash(header, tasks, path)
        set_sha256 = header["set_sha256"]  # checked: the tasks' own
    return TaskSet(tasks, str(path), fingerprint, splits, set_sha256)


def load_tasks(path: str | Path, *, manifest: str | Path | None = None) -> list[dict[str, Any]]:
    """The tasks of a task file or a release folder (see :func:`open_task_set`)."""
    return open_task_set(path, manifest=manifest).tasks


def read_release(folder: str | Path) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """A release folder's tasks (train, then test) and its split (split name -> ids)."""
    folder = Path(folder)
    found = read_manifest(folder)
    tasks: list[dict[str, Any]] = []
    for rel in found["files"]:
        if rel.startswith(f"{RELEASE_TASKS_CONFIG}/"):
            try:
                rows = read_rows(folder / rel)
            except (OSError, ValueError) as e:  # pyarrow's errors are both
                raise InputError(
                    f"cannot read the release's Parquet file: {e}",
                    stage="tasks",
                    path=str(folder / rel),
                ) from None
            for row in rows:
                tasks.append(check_task(row_to_task(row), path=str(folder / rel)))
    if not tasks:
        raise InputError("the release holds no tasks", stage="tasks", path=str(folder))
    splits = {name: list(found["split"].get(name, [])) for name in RELEASE_SPLITS}
    return tasks, splits


def instances(
    tasks: Iterable[dict[str, Any]], languages: Collection[str] | None = None
) -> list[Instance]:
    """Every (task, language) instance, tasks in order and languages sorted; only those in
    ``languages`` when given."""
    return [
        Instance(task, lang)
        for task in tasks
        for lang in sorted(task["questions"])
        if languages is None or lang in languages
    ]


def task_languages(tasks: Iterable[dict[str, Any]]) -> list[str]:
    """The question languages of a task set, sorted.

    >>> task_languages([{"questions": {"en": "?", "ko": "?"}}, {"questions": {"en": "?"}}])
    ['en', 'ko']
    """
    return sorted({lang for task in tasks for lang in task["questions"]})
