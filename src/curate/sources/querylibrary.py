"""Importer for OHDSI QueryLibrary query pages (Markdown).

A page has a metadata comment (``Group:``, ``Name:`` ...), a ``# C01: title`` heading,
a description, one ```` ```sql ```` block of OHDSI SQL, and an *Input* table
(``Parameter | Example | Mandatory | Notes``).  A page becomes one record:

- ``id``: ``querylibrary/<code>`` with the code of the title heading (else of ``Name:``,
  else the file name);
- ``question``: the title and the description, whitespace collapsed;
- ``gold_sql``: the SQL block as written, ``gold_dialect`` ``"ohdsi"``, or
  ``"postgres"`` / ``"oracle"`` for a page written for PostgreSQL or Oracle
  (:mod:`curate.sources.dialect`), or ``"auto"`` for a page mixing dialects (curation
  reads it with each dialect it mixes and keeps it only if they agree): no page is
  given SQL Server's semantics unless it is SQL Server SQL;
- ``parameters``: the Input table's examples by parameter name in snake case
  (a repeated name gets ``_2``, ``_3``...), values as written;
- ``category``: the ``Group:``; ``notes``: the prose around the SQL block.

A page that is not one query (no SQL block, several) is a problem with a reason.

>>> page = '''<!---
... Group:person
... Name:PE99 Number of persons
... -->
... # PE99: Number of persons
... ## Description
... Counts the persons in the dataset.
... ## Query
... ```sql
... SELECT COUNT(*) AS n FROM @cdm.person;
... ```
... ## Input
... | Parameter | Example | Mandatory | Notes |
... | --- | --- | --- | --- |
... | Gender concept ID | 8507 | No | Male |
... '''
>>> r = parse_page(page, name="person/PE99.md")
>>> r.id, r.question
('querylibrary/PE99', 'Number of persons. Counts the persons in the dataset.')
>>> dict(r.parameters), r.category, r.gold_dialect
({'gender_concept_id': '8507'}, 'person', 'ohdsi')
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from curate.sources.dialect import detect_dialect
from curate.sources.records import SourceProblem, SourceRecord, check_object
from score.inputs.jsonl import read_text

PATTERN = "*.md"

#: The source dialect of each detected one (a mix is decided at curation).
_GOLD_DIALECT = {"ohdsi": "ohdsi", "postgres": "postgres", "oracle": "oracle", "mixed": "auto"}
ID_PREFIX = "querylibrary/"

_HEADING = re.compile(r"^(#{1,6})\s*(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
_CODE_TITLE = re.compile(r"^(?P<code>[A-Za-z]+[0-9]+)\s*:\s*(?P<title>.*\S)\s*$")
_NAME_CODE = re.compile(r"^(?P<code>[A-Za-z]+[0-9]+)\b")
_TABLE_RULE = re.compile(r"^:?-+:?$")


@dataclass
class _Section:
    heading: str
    line: int
    text: list[str] = field(default_factory=list)


@dataclass
class _Block:
    info: str
    line: int
    lines: list[str] = field(default_factory=list)


@dataclass
class _Page:
    metadata: dict[str, str]
    title: _Section | None
    sections: list[_Section]
    blocks: list[_Block]


def _scan(text: str) -> _Page:
    """Split a page into metadata, headings with their prose, and fenced code blocks."""
    lines = text.splitlines()
    metadata: dict[str, str] = {}
    start = 0
    if lines and lines[0].lstrip().startswith("<!--"):
        for i, line in enumerate(lines):
            if i > 0 and "-->" in line:
                start = i + 1
                break
            key, sep, value = line.partition(":")
            if sep and i > 0:
                metadata[key.strip().lower()] = value.strip()
    title: _Section | None = None
    sections: list[_Section] = []
    blocks: list[_Block] = []
    preamble = _Section("", start + 1)
    current = preamble
    fence: str | None = None
    for number, line in enumerate(lines[start:], start=start + 1):
        if fence is not None:
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = None
            else:
                blocks[-1].lines.append(line)
            continue
        if m := _FENCE.match(line):
            fence = m.group(1)
            blocks.append(_Block(m.group(2).lower(), number))
            current.text.append("")  # a code block ends a paragraph
            continue
        if m := _HEADING.match(line):
            current = _Section(m.group(2), number)
            if len(m.group(1)) == 1 and title is None:
                title = current
            else:
                sections.append(current)
            continue
        current.text.append(line)
    return _Page(metadata, title, sections, blocks)


def _prose(lines: list[str]) -> str:
    """Paragraph text with its whitespace collapsed to single spaces."""
    return " ".join(" ".join(lines).split())


def _snake(name: str) -> str:
    """A parameter name from a cell: ``'SNOMED-CT Concept ID'`` -> ``snomed_ct_concept_id``."""
    out = "".join(c.lower() if c.isalnum() else "_" for c in name)
    out = "_".join(part for part in out.split("_") if part)
    return out if out and not out[0].isdigit() else f"p_{out}"


def _cells(line: str) -> list[str]:
    row = line.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") else row
    return [cell.strip() for cell in row.split("|")]


def _parameters(lines: list[str]) -> dict[str, str]:
    """The Input table as name -> example (rows without an example are left out)."""
    rows = [_cells(line) for line in lines if "|" in line]
    if not rows:
        return {}
    header = [h.lower() for h in rows[0]]
    if "parameter" not in header or "example" not in header:
        return {}
    name_at, example_at = header.index("parameter"), header.index("example")
    out: dict[str, str] = {}
    for row in rows[1:]:
        if all(_TABLE_RULE.match(c) or not c for c in row):
            continue
        row = row + [""] * (len(header) - len(row))
        name, example = row[name_at], row[example_at]
        if not name or not example:
            continue
        key = base = _snake(name)
        n = 1
        while key in out:
            n += 1
            key = f"{base}_{n}"
        out[key] = example
    return out


def parse_page(
    text: str, *, name: str, path: str | os.PathLike[str] | None = None
) -> SourceRecord | SourceProblem:
    """One QueryLibrary page as a record, or the problem that keeps it from being one.

    ``name`` is how the page is known in ``origin.file`` (e.g. ``drug/D17.md``); ``path``
    is where problems point (defaults to ``name``).
    """
    shown = str(path) if path is not None else name
    page = _scan(text)
    stem = Path(name).stem
    heading = page.title.heading if page.title else page.metadata.get("name", "")
    code_title = _CODE_TITLE.match(heading)
    if code_title:
        code, title = code_title.group("code"), code_title.group("title")
    else:
        name_code = _NAME_CODE.match(page.metadata.get("name", ""))
        code, title = (name_code.group("code") if name_code else stem), heading.strip()
    record_id = ID_PREFIX + code
    title_line = page.title.line if page.title else 1

    def problem(reason: str, message: str, line: int | None) -> SourceProblem:
        return SourceProblem(reason, message, path=shown, line=line, task_id=record_id)

    if not title:
        return problem("no_title", "page has no '# CODE: title' heading or Name:", 1)
    sql_blocks = [b for b in page.blocks if b.info == "sql"]
    if not sql_blocks:
        return problem("no_sql_block", "page has no ```sql block", title_line)
    if len(sql_blocks) > 1:
        lines = ", ".join(str(b.line) for b in sql_blocks)
        return problem(
            "several_sql_blocks",
            f"page has {len(sql_blocks)} ```sql blocks (lines {lines})",
            sql_blocks[1].line,
        )
    block = sql_blocks[0]
    sql = "\n".join(block.lines).strip()
    if not sql:
        return problem("empty_sql_block", "the ```sql block is empty", block.line)

    detected = detect_dialect(sql)
    by_heading = {s.heading.strip().lower(): s for s in page.sections}
    described = by_heading.get("description") or page.title
    description = _prose(described.text) if described else ""
    stop = "" if title[-1] in ".?!" else "."
    question = f"{title}{stop} {description}".strip()
    query_prose = _prose(by_heading["query"].text) if "query" in by_heading else ""
    inputs = by_heading.get("input")
    obj = {
        "format": "sqlgold.source/1",
        "id": record_id,
        "question": question,
        "gold_sql": sql,
        "gold_dialect": _GOLD_DIALECT[detected.dialect],
        "origin": {"importer": "querylibrary", "file": name, "line": block.line, "page": code},
    }
    parameters = _parameters(inputs.text) if inputs else {}
    if parameters:
        obj["parameters"] = parameters
    if group := page.metadata.get("group"):
        obj["category"] = group
    if query_prose:
        obj["notes"] = query_prose
    found = check_object(obj, path=shown, line=block.line)
    if found:
        return found[0]
    return SourceRecord.from_dict(obj)


def load_file(
    path: str | os.PathLike[str], *, name: str | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """The record of one page file (or its problem)."""
    name = name if name is not None else Path(path).name
    try:
        text = read_text(path, stage="import")
    except (OSError, UnicodeDecodeError) as e:
        return [], [SourceProblem("unreadable", f"cannot read page: {e}", path=str(path))]
    result = parse_page(text, name=name, path=path)
    if isinstance(result, SourceProblem):
        return [], [result]
    return [result], []
