"""Loading source records: a file or folder in one format, records and problems out.

Each importer module reads one format and has a ``load_file(path, *, name)`` and a
``PATTERN`` for the files it reads in a folder:

- ``jsonl``: the project's own records (``sqlgold.source/1``), see :mod:`curate.sources.records`;
- ``querylibrary``: OHDSI QueryLibrary Markdown query pages;
- ``funsql``: a HealthLLM-style FunSQLQueries ``train.jsonl`` (question and SQL per line);
- ``text2omop``: TEXT-TO-OMOP's item files (``{"input", "output"}`` per line).

>>> from curate.sources import FORMAT_NAMES
>>> tuple(sorted(FORMATS)) == FORMAT_NAMES
True
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from curate.sources import funsql, jsonl, querylibrary, text2omop
from curate.sources.records import SourceProblem, SourceRecord, check_object
from score.errors import InputError
from score.inputs.jsonl import LineTooLong, read_text

FORMATS: dict[str, ModuleType] = {
    "jsonl": jsonl,
    "querylibrary": querylibrary,
    "funsql": funsql,
    "text2omop": text2omop,
}

Loader = Callable[..., tuple[list[SourceRecord], list[SourceProblem]]]


def source_files(path: str | os.PathLike[str], format: str) -> list[tuple[Path, str]]:
    """The files ``load_sources`` reads, with the name each is known by in records.

    A file is known by its own name; the files of a folder (recursively, those matching
    the format's pattern) by their path relative to it, in sorted order.
    """
    module = _module(format)
    root = Path(path)
    if root.is_file():
        return [(root, root.name)]
    if not root.is_dir():
        raise InputError(f"no such file or folder: {root}", stage="import", path=str(root))
    found = [p for p in root.rglob(module.PATTERN) if p.is_file()]
    return sorted(((p, p.relative_to(root).as_posix()) for p in found), key=lambda x: x[1])


def load_sources(
    path: str | os.PathLike[str], format: str, **options: object
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Import every record of a file or folder in ``format``: records and problems.

    Records keep file order (files in sorted order); an id seen in an earlier file is a
    problem, and so is a file whose importer fails unexpectedly (reason ``internal``).
    ``options`` go to the format's ``load_file`` (e.g. ``mapping=`` for ``funsql``).
    Raises :class:`InputError` for an unknown format or a missing path.
    """
    loader: Loader = _module(format).load_file
    records: list[SourceRecord] = []
    problems: list[SourceProblem] = []
    seen: dict[str, str] = {}
    files = source_files(path, format)
    if not files:
        problems.append(
            SourceProblem("no_files", f"no {_module(format).PATTERN} files", path=str(path))
        )
    for file, name in files:
        try:
            found, trouble = loader(file, name=name, **options)
        except LineTooLong:
            raise  # the bound on a line stops the import: memory stays bounded
        except Exception as error:  # noqa: BLE001 - one file's failure is that file's problem
            message = " ".join(f"{type(error).__name__}: {error}".split())
            problems.append(SourceProblem("internal", message, path=str(file)))
            continue
        problems.extend(trouble)
        for record in found:
            if record.id in seen:
                problems.append(
                    SourceProblem(
                        "duplicate_id",
                        f"duplicate id (first in {seen[record.id]})",
                        path=str(file),
                        line=_line_of(record, name),
                        task_id=record.id,
                        json_path="$.id",
                    )
                )
                continue
            seen[record.id] = name
            records.append(record)
    return records, problems


def _line_of(record: SourceRecord, name: str) -> int | None:
    origin = record.origin
    return origin.line if origin is not None and origin.file == name else None


def _module(format: str) -> ModuleType:
    try:
        return FORMATS[format]
    except KeyError:
        known = ", ".join(sorted(FORMATS))
        raise InputError(
            f"unknown source format {format!r} (known: {known})", stage="import"
        ) from None


def find_source(
    path: str | os.PathLike[str], format: str, record_id: str, **options: object
) -> SourceRecord:
    """The one record ``record_id`` of a file or folder, reading no more than it must.

    For JSONL (the format large sources come in) only the lines are decoded and only the
    matching line is checked, so finding one record of thousands costs a scan of the
    file; other formats are loaded whole.  Raises :class:`InputError` naming the
    record's problem, or that no record has the id.
    """
    if format == "jsonl":
        for file, _ in source_files(path, format):
            found = _find_in_jsonl(file, record_id)
            if found is not None:
                return found
    else:
        records, _ = load_sources(path, format, **options)
        for record in records:
            if record.id == record_id:
                return record
    raise InputError(f"no record {record_id!r}", stage="import", path=str(path))


def _find_in_jsonl(file: Path, record_id: str) -> SourceRecord | None:
    try:
        text = read_text(file, stage="import")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read source file: {e}", stage="import", path=str(file)) from e
    for number, line in enumerate(text.split("\n"), start=1):  # as read_sources splits
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue  # a broken line is the importer's problem, unless it is the one asked for
        if not isinstance(obj, dict) or obj.get("id") != record_id:
            continue
        problems = check_object(obj, path=str(file), line=number)
        if problems:
            raise problems[0]
        return SourceRecord.from_dict(obj)
    return None
