"""Importers: source files of several formats in, source records and problems out.

Each importer module reads one format and has a ``load_file(path, *, name)`` and a
``PATTERN`` for the files it reads in a folder:

- ``jsonl``: the project's own records (``sqlgold.source/1``), see :mod:`curate.sources.records`;
- ``querylibrary``: OHDSI QueryLibrary Markdown query pages;
- ``funsql``: a HealthLLM-style FunSQLQueries ``train.jsonl`` (question and SQL per line).

>>> sorted(FORMATS)
['funsql', 'jsonl', 'querylibrary']
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from curate.sources import funsql, jsonl, querylibrary
from curate.sources.records import SourceProblem, SourceRecord
from score.errors import InputError

FORMATS: dict[str, ModuleType] = {"jsonl": jsonl, "querylibrary": querylibrary, "funsql": funsql}

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
        except Exception as error:  # noqa: BLE001 - one file's failure is that file's problem
            message = " ".join(f"{type(error).__name__}: {error}".split())
            problems.append(SourceProblem("internal", message, path=str(file)))
            continue
        problems.extend(trouble)
        for record in found:
            if record.id in seen:
                problems.append(
                    SourceProblem(
                        "duplicate_id", f"duplicate id (first in {seen[record.id]})",
                        path=str(file), line=_line_of(record, name),
                        task_id=record.id, json_path="$.id",
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
        raise InputError(f"unknown source format {format!r} (known: {known})",
                         stage="import") from None
