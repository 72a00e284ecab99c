"""Importer for HealthLLM-style FunSQLQueries files: a question and its SQL per JSON line.

The field names differ between versions of such files, so they are given by a
:class:`FieldMapping`.  Its defaults follow JuliaHealthOrg/FunSQLQueries'
``train.jsonl`` as HealthLLM reads it (``query`` for the question, ``sql_query`` for the
SQL Server SQL); without an id field, ids are made from the line number
(``funsql/0007`` for line 7), so they stay the same as long as the file does.
A file holding one JSON array instead of lines is read too (ids then count items).

>>> records, problems = parse_text('{"query": "How many persons?", "sql_query": "SELECT 1"}\\n',
...                                name="train.jsonl")
>>> records[0].id, records[0].gold_dialect, records[0].origin.line
('funsql/0001', 'tsql', 1)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curate.sources.records import DIALECTS, SourceProblem, SourceRecord, check_object
from score.inputs.jsonl import numbered_json, read_text

PATTERN = "*.jsonl"


@dataclass(frozen=True)
class FieldMapping:
    """Which field of an input object holds what.

    ``id`` None means: make ids from ``id_prefix`` and the line number.  ``category``
    None means: no category.
    """

    question: str = "query"
    sql: str = "sql_query"
    id: str | None = None
    category: str | None = None
    id_prefix: str = "funsql/"

    def __post_init__(self) -> None:
        for name in ("question", "sql"):
            if not getattr(self, name):
                raise ValueError(f"FieldMapping.{name} must name a field")


def _items(text: str) -> list[tuple[int, Any, str | None]]:
    """(line or item number, decoded value or None, JSON error or None) of a file's text."""
    if text.lstrip().startswith("["):
        try:
            items = json.loads(text)
        except json.JSONDecodeError:
            pass  # not one array after all: read it line by line
        else:
            if isinstance(items, list):
                return [(i, item, None) for i, item in enumerate(items, start=1)]
    return list(numbered_json(text.split("\n")))  # "\n" only: U+2028 may sit in a string


def parse_text(
    text: str,
    *,
    name: str,
    path: str | os.PathLike[str] | None = None,
    mapping: FieldMapping = FieldMapping(),
    dialect: str = "tsql",
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of a FunSQLQueries-style file's text (``name``: its origin file)."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r} (known: {', '.join(DIALECTS)})")
    shown = str(path) if path is not None else name
    records: list[SourceRecord] = []
    problems: list[SourceProblem] = []
    for number, item, error in _items(text):
        if error is not None:
            problems.append(SourceProblem("malformed_json", error, path=shown, line=number))
            continue
        if not isinstance(item, dict):
            problems.append(SourceProblem("schema", "not a JSON object", path=shown, line=number))
            continue
        record_id = item.get(mapping.id) if mapping.id else f"{mapping.id_prefix}{number:04d}"
        shown_id = record_id if isinstance(record_id, str) else None
        missing = [f for f in (mapping.question, mapping.sql, mapping.id) if f and f not in item]
        if missing:
            problems.append(
                SourceProblem(
                    "missing_field",
                    f"no field {missing[0]!r}",
                    path=shown,
                    line=number,
                    task_id=shown_id,
                    json_path=f"$.{missing[0]}",
                )
            )
            continue
        question, sql = item[mapping.question], item[mapping.sql]
        obj: dict[str, Any] = {
            "format": "sqlgold.source/1",
            "id": record_id,
            "question": question.strip() if isinstance(question, str) else question,
            "gold_sql": sql.strip() if isinstance(sql, str) else sql,
            "gold_dialect": dialect,
            "origin": {"importer": "funsql", "file": name, "line": number},
        }
        if mapping.category and item.get(mapping.category) is not None:
            obj["category"] = item[mapping.category]
        found = check_object(obj, path=shown, line=number)
        if found:
            problems.extend(found)
            continue
        records.append(SourceRecord.from_dict(obj))
    return records, problems


def load_file(
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    mapping: FieldMapping = FieldMapping(),
    dialect: str = "tsql",
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of one FunSQLQueries-style file."""
    name = name if name is not None else Path(path).name
    try:
        text = read_text(path, stage="import")
    except (OSError, UnicodeDecodeError) as e:
        return [], [SourceProblem("unreadable", f"cannot read file: {e}", path=str(path))]
    return parse_text(text, name=name, path=path, mapping=mapping, dialect=dialect)


__all__ = ["FieldMapping", "load_file", "parse_text"]
