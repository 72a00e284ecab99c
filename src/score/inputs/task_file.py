"""The task file: a header line carrying the set hash, then one task record per line.

``sqlgold curate`` writes ``<name>_tasks.jsonl``::

    {"database_fingerprint": "3b1c...", "format": "sqlgold.task-file/1", "set_sha256": ...}
    {"answer_dialect": "duckdb", ..., "id": "omop-001", ...}
    ...

The header's ``set_sha256`` is the set hash of the tasks' item hashes
(:func:`score.inputs.task_manifest.set_hash`: id, questions, gold SQL, tier, order and answerable
flags, category, the today the gold was verified under and the gold result's hash), the
same a release of these tasks publishes in its manifest.  A reader recomputes it and
refuses a file whose tasks no longer match it: a gold edited by hand (or a task added or
removed) is refused even without a release manifest, with a message saying how to
re-curate.  ``database_fingerprint`` names the data the tasks were verified on (scoring
warns when it scores on other data).  Tasks are sorted by id with sorted keys, so the
same tasks always give the same bytes.

Task records carry ``schema_version`` :data:`TASK_FORMAT_VERSION`.  Format ``1.0`` (no
``today``, no ``gold_result.sha256``, no header) is refused with a message naming how
to re-curate: a 1.0 file cannot say which day or which gold result it was verified on.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import IO, Any, Protocol

from score.errors import InputError
from score.inputs.jsonl import numbered_json, read_lines
from score.inputs.schemas import validation_errors
from score.inputs.task_manifest import set_hash

TASK_FILE_FORMAT = "sqlgold.task-file/1"

#: The task record format this sqlgold writes and reads (``schema_version`` of a task).
TASK_FORMAT_VERSION = "1.1"
#: The format of a task with alternative golds (one without them stays 1.1, so a task
#: file without any is the same bytes as before 1.2).
TASK_FORMAT_WITH_ALTERNATIVES = "1.2"
TASK_FORMAT_VERSIONS = frozenset({TASK_FORMAT_VERSION, TASK_FORMAT_WITH_ALTERNATIVES})

#: Task formats this sqlgold refuses with a hint: format -> what to do.
RETIRED_TASK_FORMATS = {
    "1.0": "format 1.0 does not pin the day and the gold result a task was verified on "
    "(no today, no gold_result.sha256, no set hash); re-curate its source with "
    "`sqlgold curate SOURCE` (`make curate` for the project's tasks)",
}

RECURATE = (
    "re-curate the source with `sqlgold curate SOURCE` (`make curate` for the project's "
    "tasks), or score a published release (its folder, or --manifest)"
)

STAGE = "tasks"


class SchemaMemo(Protocol):
    """Task files known to pass the task schema, by the sha256 of their bytes
    (:class:`score.inputs.validated_files.ValidatedFiles`)."""

    def known(self, content_sha256: str) -> bool: ...

    def remember(self, content_sha256: str) -> None: ...


def task_line(task: Mapping[str, Any]) -> str:
    """One record as its JSONL line: sorted keys, UTF-8 kept.

    >>> task_line({"id": "a", "answerable": True})
    '{"answerable": true, "id": "a"}\\n'
    """
    return json.dumps(task, sort_keys=True, ensure_ascii=False) + "\n"


def task_file_header(
    tasks: Iterable[Mapping[str, Any]], *, database_fingerprint: str | None = None
) -> dict[str, Any]:
    """The header line's object for ``tasks``.

    >>> h = task_file_header([{"id": "a"}])
    >>> sorted(h), h["tasks"]
    (['database_fingerprint', 'format', 'set_sha256', 'tasks'], 1)
    """
    tasks = list(tasks)
    return {
        "format": TASK_FILE_FORMAT,
        "tasks": len(tasks),
        "set_sha256": set_hash(tasks),
        "database_fingerprint": database_fingerprint,
    }


def task_file_text(
    tasks: Iterable[Mapping[str, Any]], *, database_fingerprint: str | None = None
) -> str:
    """The whole task file: the header, then the tasks sorted by id."""
    ordered = sorted(tasks, key=lambda t: t["id"])
    header = task_file_header(ordered, database_fingerprint=database_fingerprint)
    return task_line(header) + "".join(task_line(t) for t in ordered)


def check_task(
    task: Any, *, path: str | None = None, line: int | None = None, schema: bool = True
) -> dict:
    """Return ``task`` if it is a valid task record, else raise InputError saying where;
    without ``schema``, only its format version is checked (its file's bytes were
    validated before: :mod:`score.inputs.validated_files`)."""
    task_id = task.get("id") if isinstance(task, dict) else None
    if isinstance(task, dict) and task.get("schema_version") not in TASK_FORMAT_VERSIONS:
        version = task.get("schema_version")
        hint = RETIRED_TASK_FORMATS.get(str(version), "upgrade sqlgold or re-curate")
        raise InputError(
            f"task format {version!r} is not one this sqlgold reads "
            f"({', '.join(sorted(TASK_FORMAT_VERSIONS))}): {hint}",
            stage=STAGE,
            path=path,
            line=line,
            task_id=task_id,
        )
    problems = validation_errors("task", task) if schema else []
    if problems:
        raise InputError(
            "; ".join(problems[:3])
            + (f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""),
            stage=STAGE,
            path=path,
            line=line,
            task_id=task_id,
        )
    return task


def _header(value: Any, path: str, line: int) -> dict[str, Any]:
    if isinstance(value, dict) and "schema_version" in value and "format" not in value:
        check_task(value, path=path, line=line)  # a retired format says what to do
    if not isinstance(value, dict) or value.get("format") != TASK_FILE_FORMAT:
        found = value.get("format") if isinstance(value, dict) else None
        what = f"format {found!r}" if found else "no header line"
        raise InputError(
            f"not a task file of format {TASK_FILE_FORMAT} ({what}; the first line must be "
            f"the header `sqlgold curate` writes): {RECURATE}",
            stage=STAGE,
            path=path,
            line=line,
        )
    count, set_sha = value.get("tasks"), value.get("set_sha256")
    if not isinstance(count, int) or not isinstance(set_sha, str):
        raise InputError(
            "the header lacks its task count or set_sha256", stage=STAGE, path=path, line=line
        )
    return value


def _records(path: Path, f: IO[bytes]) -> Iterator[tuple[int, Any]]:
    for number, value, error in numbered_json(read_lines(f, path=path, stage=STAGE)):
        if error is not None:
            raise InputError(error, stage=STAGE, path=str(path), line=number)
        yield number, value


def read_task_file(
    path: str | Path, *, check_set: bool = True, validated: SchemaMemo | None = None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and the tasks (in file order) of a task file, every task validated and
    (with ``check_set``) the set hash checked; InputError naming the file and line
    otherwise.  The file is read twice, never whole: once for its sha256 (when
    ``validated`` knows it, the tasks are not validated against the schema again; when it
    does not, it learns it once every task passed), then line by line, each line under
    :data:`score.defaults.MAX_LINE_BYTES`."""
    path = Path(path)
    if path.is_dir():
        raise InputError(
            "a folder, not a task file (a release folder holds a manifest.json)",
            stage=STAGE,
            path=str(path),
        )
    if not path.is_file():
        raise InputError("no such task file", stage=STAGE, path=str(path))
    try:
        f = path.open("rb")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", stage=STAGE, path=str(path)) from None
    with f:
        try:
            content = hashlib.file_digest(f, "sha256").hexdigest()
            f.seek(0)
        except OSError as e:
            why = f"cannot read: {e.strerror or e}"
            raise InputError(why, stage=STAGE, path=str(path)) from None
        return _read_tasks(path, f, content, check_set=check_set, validated=validated)


def _read_tasks(
    path: Path, f: IO[bytes], content: str, *, check_set: bool, validated: SchemaMemo | None
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The tasks of the open task file ``f`` (its sha256 ``content``), line by line."""
    schema = validated is None or not validated.known(content)
    header: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for number, value in _records(path, f):
        if header is None:
            header = _header(value, str(path), number)
            continue
        check_task(value, path=str(path), line=number, schema=schema)
        if value["id"] in seen:
            raise InputError(
                f"duplicate task id (first on line {seen[value['id']]})",
                stage=STAGE,
                path=str(path),
                line=number,
                task_id=value["id"],
            )
        seen[value["id"]] = number
        tasks.append(value)
    if header is None or not tasks:
        raise InputError("the task file has no tasks", stage=STAGE, path=str(path))
    if schema and validated is not None:
        validated.remember(content)
    if check_set:
        check_set_hash(header, tasks, path)
    return header, tasks


def check_set_hash(
    header: Mapping[str, Any], tasks: list[dict[str, Any]], path: str | Path
) -> None:
    """Refuse tasks that no longer match the set hash of their file's header."""
    if header["tasks"] != len(tasks) or header["set_sha256"] != set_hash(tasks):
        raise InputError(
            f"the tasks no longer match the set hash in the file's header ({len(tasks)} "
            f"tasks, the header says {header['tasks']}): a task was edited, added or removed "
            f"after curation; {RECURATE}",
            stage=STAGE,
            path=str(path),
            line=1,
        )
