"""Source records: the editable benchmark items, and the project's JSONL file of them.

A :class:`SourceRecord` is one question with its gold SQL, before curation.  On disk it
is one JSON object per line, checked against ``schemas/source.schema.json`` (format
``sqlgold.source/1``).  Reading never stops at the first bad line: every problem comes
back as a :class:`SourceProblem` naming the file, the line, the id and the JSON path.

>>> r = SourceRecord(id="q1", question="How many persons?",
...                  gold_sql="SELECT COUNT(*) FROM cdm.person", gold_dialect="duckdb")
>>> to_json_line(r)[:60]
'{"format": "sqlgold.source/1", "gold_dialect": "duckdb", "go'
>>> records, problems = parse_lines([to_json_line(r), '{"id": "q1"'], path="a.jsonl")
>>> [x.id for x in records], [str(p) for p in problems]
(['q1'], ["[import] a.jsonl:2: not JSON: Expecting ',' delimiter (column 12)"])
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from score.cdm.schema import CDM_TABLES
from score.errors import InputError
from score.files import write_atomic
from score.inputs.jsonl import numbered_json, read_lines
from score.inputs.schemas import schema_path, validator

#: The format every record carries; readers refuse any other.
FORMAT = "sqlgold.source/1"
#: The format of a record with alternative golds (a record without them stays ``FORMAT``).
FORMAT_WITH_ALTERNATIVES = "sqlgold.source/2"
KNOWN_FORMATS: frozenset[str] = frozenset({FORMAT, FORMAT_WITH_ALTERNATIVES})

#: Dialects gold and answer SQL may be written in; ``auto``: decided at curation by the
#: readers of the dialects its constructs belong to, which must agree.
DIALECTS: tuple[str, ...] = ("ohdsi", "tsql", "duckdb", "postgres", "oracle", "auto")

SCHEMA_PATH = schema_path("source")

#: A value of an OHDSI @parameter: text is substituted as written, a list is joined with ",".
ParamValue = str | int | float | bool | list[str | int | float | bool]


class SourceProblem(InputError):
    """A source record that cannot be read: where it is, which field, and why.

    ``reason`` is a short stable code (``malformed_json``, ``schema``, ``duplicate_id``,
    ``unknown_format``, ...) for counting; the message is for people.

    >>> str(SourceProblem("schema", "'x' is not of type 'boolean'", path="a.jsonl",
    ...                   line=3, task_id="q1", json_path="$.answerable"))
    "[import] a.jsonl:3 (task q1): $.answerable: 'x' is not of type 'boolean'"
    """

    stage = "import"

    def __init__(
        self,
        reason: str,
        message: str,
        *,
        path: str | os.PathLike[str] | None = None,
        line: int | None = None,
        task_id: str | None = None,
        json_path: str | None = None,
    ) -> None:
        shown = f"{json_path}: {message}" if json_path and json_path != "$" else message
        where = None if path is None else str(path)
        super().__init__(shown, path=where, line=line, task_id=task_id)
        self.reason = reason
        self.json_path = json_path


@dataclass(frozen=True)
class UnanswerableBecause:
    """What makes a question unanswerable: tables with no rows, columns NULL in every row
    (checked on the database); or ``declared``: the source benchmark says so (e.g.
    TEXT-TO-OMOP's ``<NO_SQL>`` gold), which no database can check."""

    empty_tables: tuple[str, ...] = ()
    null_columns: tuple[str, ...] = ()  # "table.column"
    declared: str | None = None


@dataclass(frozen=True)
class Origin:
    """Where a record came from (importer name and, as far as known, file, line, page)."""

    importer: str
    file: str | None = None
    line: int | None = None
    page: str | None = None
    url: str | None = None
    license: str | None = None


@dataclass(frozen=True)
class AlternativeGold:
    """Another gold query a right answer may match (its dialect: the gold's when None)."""

    gold_sql: str
    gold_dialect: str | None = None


@dataclass(frozen=True)
class SourceRecord:
    """One benchmark item as written by its author (field meanings: the JSON Schema)."""

    id: str
    question: str
    gold_sql: str | None = None
    gold_dialect: str | None = None
    questions: Mapping[str, str] | None = None
    answer_sql: str | None = None
    answer_dialect: str | None = None
    parameters: Mapping[str, ParamValue] = field(default_factory=dict)
    category: str | None = None
    difficulty: str | None = None
    notes: str | None = None
    order_matters: bool | None = None
    answerable: bool = True
    unanswerable_because: UnanswerableBecause | None = None
    origin: Origin | None = None
    alternative_golds: tuple[AlternativeGold, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The record as its JSON object: unset optional fields are left out."""
        out: dict[str, Any] = {
            "format": FORMAT_WITH_ALTERNATIVES if self.alternative_golds else FORMAT
        }
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (f.name in ("parameters", "alternative_golds") and not value):
                continue
            if f.name == "alternative_golds":
                out[f.name] = [
                    {
                        k: v
                        for k, v in (("gold_sql", a.gold_sql), ("gold_dialect", a.gold_dialect))
                        if v
                    }
                    for a in value
                ]
                continue
            if f.name == "answerable" and value is True:
                continue
            if isinstance(value, UnanswerableBecause | Origin):
                value = {
                    k.name: list(v) if isinstance(v, tuple) else v
                    for k in fields(value)
                    if (v := getattr(value, k.name)) not in (None, ())
                }
            elif isinstance(value, Mapping):
                value = {k: list(v) if isinstance(v, tuple) else v for k, v in value.items()}
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> SourceRecord:
        """Build a record from a JSON object that already passed the schema."""
        data = {k: v for k, v in obj.items() if k != "format"}
        if "unanswerable_because" in data:
            ub = data["unanswerable_because"]
            data["unanswerable_because"] = UnanswerableBecause(
                empty_tables=tuple(ub.get("empty_tables", ())),
                null_columns=tuple(ub.get("null_columns", ())),
                declared=ub.get("declared"),
            )
        if "origin" in data:
            data["origin"] = Origin(**data["origin"])
        if "alternative_golds" in data:
            data["alternative_golds"] = tuple(
                AlternativeGold(**a) for a in data["alternative_golds"]
            )
        return cls(**data)


def source_schema() -> dict[str, Any]:
    """The JSON Schema of one source record (``schemas/source.schema.json``)."""
    return validator("source").schema


def check_object(
    obj: Any, *, path: str | None = None, line: int | None = None
) -> list[SourceProblem]:
    """Every problem of one decoded JSON value as a source record (empty when valid).

    Checks the format version first (an unknown one is the only problem reported), then
    the schema, then what a schema cannot say: table and column names of
    ``unanswerable_because`` must be CDM v5.4 names, and ``questions["en"]`` must be
    ``question``.

    >>> [p.reason for p in check_object({"format": "sqlgold.source/9", "id": "a"})]
    ['unknown_format']
    >>> [p.json_path for p in check_object({"format": FORMAT, "id": "a", "question": "?"})]
    ['$']
    """
    task_id = obj.get("id") if isinstance(obj, dict) else None
    task_id = task_id if isinstance(task_id, str) else None

    def problem(reason: str, message: str, json_path: str = "$") -> SourceProblem:
        return SourceProblem(
            reason, message, path=path, line=line, task_id=task_id, json_path=json_path
        )

    if isinstance(obj, dict) and "format" in obj and obj["format"] not in KNOWN_FORMATS:
        known = ", ".join(sorted(KNOWN_FORMATS))
        return [
            problem(
                "unknown_format",
                f"unknown format {obj['format']!r} (this reader knows {known})",
                "$.format",
            )
        ]
    errors = sorted(validator("source").iter_errors(obj), key=lambda e: (e.json_path, e.message))
    problems = [problem("schema", e.message, e.json_path) for e in errors]
    if problems:
        return problems
    ub = obj.get("unanswerable_because", {})
    for i, table in enumerate(ub.get("empty_tables", [])):
        if table not in CDM_TABLES:
            problems.append(
                problem(
                    "unknown_table",
                    f"{table!r} is not a CDM v5.4 table",
                    f"$.unanswerable_because.empty_tables[{i}]",
                )
            )
    for i, name in enumerate(ub.get("null_columns", [])):
        table, column = name.split(".", 1)
        if column not in {c[0] for c in CDM_TABLES.get(table, ())}:
            problems.append(
                problem(
                    "unknown_column",
                    f"{name!r} is not a CDM v5.4 column",
                    f"$.unanswerable_because.null_columns[{i}]",
                )
            )
    english = obj.get("questions", {}).get("en")
    if english is not None and english != obj["question"]:
        problems.append(
            problem("inconsistent_question", "differs from $.question", "$.questions.en")
        )
    return problems


def parse_lines(
    lines: Iterable[str | bytes], *, path: str | os.PathLike[str] | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of JSONL text, line by line (blank lines are skipped).

    A record with any problem is left out; a repeated id is a problem of the later line.
    """
    shown = None if path is None else str(path)
    records: list[SourceRecord] = []
    problems: list[SourceProblem] = []
    first_line: dict[str, int] = {}
    for number, obj, error in numbered_json(lines):
        if error is not None:
            problems.append(SourceProblem("malformed_json", error, path=shown, line=number))
            continue
        found = check_object(obj, path=shown, line=number)
        if found:
            problems.extend(found)
            continue
        record = SourceRecord.from_dict(obj)
        if record.id in first_line:
            problems.append(
                SourceProblem(
                    "duplicate_id",
                    f"duplicate id (first on line {first_line[record.id]})",
                    path=shown,
                    line=number,
                    task_id=record.id,
                    json_path="$.id",
                )
            )
            continue
        first_line[record.id] = number
        records.append(record)
    return records, problems


def read_sources(path: str | os.PathLike[str]) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Read a source JSONL file: its valid records in file order, and every problem.

    Raises :class:`score.errors.InputError` only when the file cannot be read at all.
    """
    try:
        # lines split on "\n" only (a U+2028 or U+0085 inside a string is no line break),
        # as bytes: a line that is not UTF-8 is that line's problem, not the file's
        with open(path, "rb") as f:
            lines = list(read_lines(f, path=path, stage="import"))
    except OSError as e:
        raise InputError(f"cannot read source file: {e}", stage="import", path=str(path)) from e
    return parse_lines(lines, path=path)


def to_json_line(record: SourceRecord) -> str:
    """One record as its JSONL line: sorted keys, UTF-8 text kept as is, no newline."""
    return json.dumps(record.to_dict(), sort_keys=True, ensure_ascii=False)


def write_sources(path: str | os.PathLike[str], records: Sequence[SourceRecord]) -> None:
    """Write records as JSONL in the given order, atomically (temp file, then rename).

    Every record is checked against the schema first and ids must be unique; on a
    problem nothing is written and the first problem is raised.
    """
    seen: set[str] = set()
    lines = []
    for number, record in enumerate(records, start=1):
        found = check_object(record.to_dict(), path=str(path), line=number)
        if record.id in seen:
            found.append(
                SourceProblem(
                    "duplicate_id",
                    "duplicate id",
                    path=str(path),
                    line=number,
                    task_id=record.id,
                    json_path="$.id",
                )
            )
        if found:
            raise found[0]
        seen.add(record.id)
        lines.append(to_json_line(record) + "\n")
    write_atomic(path, "".join(lines), make_parents=False)
