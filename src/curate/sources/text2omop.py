"""Importer for TEXT-TO-OMOP's item files (``DATA/test.jsonl`` and its other splits).

Each line is ``{"input": question, "output": gold}`` (TEXT-TO-OMOP, red1dwarf/TEXT-TO-OMOP
at f5c858f): the question keeps its tagged values as written (``<DRUG>19041823</DRUG>``),
the gold is PostgreSQL over unqualified OMOP CDM 5.4 table names, ending in ``;``, or
exactly ``<NO_SQL>`` for a question its authors made unanswerable.  Both are stripped, as
its inference scripts strip them before writing result files.

* an answerable item becomes a record with ``gold_dialect`` ``postgres``;
* a ``<NO_SQL>`` item becomes an unanswerable record whose ``unanswerable_because`` is
  the benchmark's declaration (no table or column of the database is named: its
  unanswerable questions ask for what the CDM does not hold at all, a phone number or
  a paper, which no database check can confirm);
* ids come from the content (:func:`score.inputs.text2omop.item_ids`): the same on every
  import, and the ones a result file's lines are matched by.

Fields other than ``input`` and ``output`` are not read.

>>> records, problems = parse_text('{"input": "How many persons?", "output": "SELECT 1;"}\\n'
...                                '{"input": "Phone of patient 7?", "output": "<NO_SQL>"}\\n',
...                                name="test.jsonl")
>>> [(r.id, r.gold_dialect, r.answerable) for r in records], problems
([('text2omop/c485bbff7dc3', 'postgres', True), ('text2omop/69061a319a79', None, False)], [])
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curate.sources.records import SourceProblem, SourceRecord, check_object
from score.inputs.jsonl import numbered_json, read_lines
from score.inputs.text2omop import DIALECT, ITEM_FIELDS, NO_SQL, field_problem, item_ids

PATTERN = "*.jsonl"

#: What an unanswerable record says of itself.
DECLARED = "TEXT-TO-OMOP's gold is <NO_SQL> (a question its authors made unanswerable)"


def parse_text(
    text: str, *, name: str, path: str | os.PathLike[str] | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of a TEXT-TO-OMOP item file's text (``name``: its origin file)."""
    return parse_lines(text.split("\n"), name=name, path=path)


def parse_lines(
    lines: Iterable[str | bytes], *, name: str, path: str | os.PathLike[str] | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of a TEXT-TO-OMOP item file's lines (text, or bytes: a line
    that is not UTF-8 is that line's problem, not the file's)."""
    shown = str(path) if path is not None else name
    problems: list[SourceProblem] = []
    items: list[tuple[int, str, str]] = []
    for number, item, error in numbered_json(lines):
        if error is not None:
            problems.append(SourceProblem("malformed_json", error, path=shown, line=number))
            continue
        if not isinstance(item, dict):
            problems.append(SourceProblem("schema", "not a JSON object", path=shown, line=number))
            continue
        trouble = field_problem(item, ITEM_FIELDS)
        if trouble is not None:
            reason = "missing_field" if trouble.startswith("no field") else "schema"
            problems.append(SourceProblem(reason, trouble, path=shown, line=number))
            continue
        items.append((number, item["input"].strip(), item["output"].strip()))
    ids = item_ids((question, gold) for _, question, gold in items)
    records: list[SourceRecord] = []
    for record_id, (number, question, gold) in zip(ids, items, strict=True):
        obj: dict[str, Any] = {
            "format": "sqlgold.source/1",
            "id": record_id,
            "question": question,
            "origin": {"importer": "text2omop", "file": name, "line": number},
        }
        if gold == NO_SQL:
            obj["answerable"] = False
            obj["unanswerable_because"] = {"declared": DECLARED}
        else:
            obj["gold_sql"] = gold
            obj["gold_dialect"] = DIALECT
        found = check_object(obj, path=shown, line=number)
        if found:
            problems.extend(found)
            continue
        records.append(SourceRecord.from_dict(obj))
    return records, problems


def load_file(
    path: str | os.PathLike[str], *, name: str | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of one TEXT-TO-OMOP item file."""
    name = name if name is not None else Path(path).name
    try:
        with open(path, "rb") as f:  # a line over the bound stops the read (LineTooLong)
            lines = list(read_lines(f, path=path, stage="import"))
    except OSError as e:
        return [], [SourceProblem("unreadable", f"cannot read file: {e}", path=str(path))]
    return parse_lines(lines, name=name, path=path)


__all__ = ["DECLARED", "load_file", "parse_text"]
