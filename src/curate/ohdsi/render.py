"""OHDSI SQL to plain SQL Server SQL: SqlRender templates resolved.

OHDSI SQL is SQL Server SQL plus SqlRender's template syntax:

- ``@name`` parameters, substituted as text (a list value is joined with ``,``);
- ``{DEFAULT @name = value}`` default values;
- ``{condition} ? {then}`` and ``{condition} ? {then} : {else}`` blocks, where a
  condition uses ``==``, ``!=``/``<>``, ``IN (...)``, ``&``, ``|``, ``!``, parentheses
  and the literals ``true``/``false``/``1``/``0``, after parameter substitution.

:func:`render` resolves the template with a small tokenizer and recursive-descent
parser (never by rewriting the SQL text with patterns).  Schema placeholders, a
parameter used as ``@x.table`` (outside literals and comments) or one of
:data:`SCHEMA_PLACEHOLDERS`, all become the database's one schema ``cdm``.
:func:`to_sql_server` then makes one query of the script (:mod:`curate.ohdsi.script`),
and :func:`render_record` does both for a record.

Where this deliberately differs from SqlRender: braces, ``?`` and ``:`` inside SQL
string literals and comments are text; a parameter without a value inside a literal or
comment is left as written, and in a condition compared as written (as SqlRender
does); elsewhere it is an error; mixing ``&`` and ``|`` without
parentheses is an error (SqlRender cannot evaluate it either).

>>> render("SELECT * FROM @cdm.person WHERE year_of_birth > @y", {"y": 1950}).sql
'SELECT * FROM cdm.person WHERE year_of_birth > 1950'
>>> render("SELECT {@male} ? {8507} : {8532} AS g", {"male": "true"}).sql
'SELECT 8507 AS g'
>>> try:
...     render("SELECT x FROM t WHERE y = @missing")
... except RenderError as e:
...     print(e.reason, "/", e.message)
missing_parameter / parameter @missing has no value
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

from curate.ohdsi.conditions import Condition
from curate.ohdsi.errors import MISSING_PARAMETER, RenderError
from curate.ohdsi.script import to_single_query
from curate.ohdsi.statements import SingleQueryError
from curate.ohdsi.template import Default, Group, IfBlock, Parser, Tok, tokenize
from curate.sources.records import SourceRecord

#: The schema every placeholder maps to.
CDM_SCHEMA = "cdm"

#: Parameters that name a schema wherever they stand (any ``@x.`` does too).
SCHEMA_PLACEHOLDERS: frozenset[str] = frozenset({
    "cdm", "vocab", "vocabulary", "results", "cohort", "scratch", "work", "temp",
    "cdm_schema", "vocab_schema", "vocabulary_schema", "results_schema", "cohort_schema",
    "cdm_database_schema", "vocabulary_database_schema", "results_database_schema",
    "cohort_database_schema", "target_database_schema", "work_database_schema",
    "cdmDatabaseSchema", "vocabularyDatabaseSchema", "resultsDatabaseSchema",
    "cohortDatabaseSchema", "targetDatabaseSchema", "workDatabaseSchema",
})


@dataclass(frozen=True)
class RenderResult:
    """Rendered SQL and what was done to get it (schema mappings, defaults, ...)."""

    sql: str
    notes: tuple[str, ...] = ()


def _as_text(value: Any) -> str:
    """A parameter value as SqlRender substitutes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_as_text(v) for v in value)
    return str(value)


class _Renderer:
    def __init__(self, parameters: Mapping[str, Any], defaults: dict[str, str]) -> None:
        self.parameters = parameters
        self.defaults = defaults
        self.notes: dict[str, None] = {}  # ordered set
        self.in_condition = False

    def note(self, text: str) -> None:
        self.notes.setdefault(text, None)

    def param(self, tok: Tok) -> str:
        if (tok.schema and not tok.lenient) or tok.name in SCHEMA_PLACEHOLDERS:
            self.note(f"@{tok.name} -> {CDM_SCHEMA}")
            return CDM_SCHEMA
        if tok.name in self.parameters:
            return _as_text(self.parameters[tok.name])
        if tok.name in self.defaults:
            self.note(f"@{tok.name} took its DEFAULT {self.defaults[tok.name]!r}")
            return self.defaults[tok.name]
        if tok.lenient or self.in_condition:
            where = "a condition" if self.in_condition else "a literal or comment"
            self.note(f"{tok.text} has no value: left as written in {where}")
            return tok.text
        raise RenderError(MISSING_PARAMETER, f"parameter {tok.text} has no value")

    def sequence(self, items: tuple[Any, ...]) -> str:
        out: list[str] = []
        strip_next = False
        for item in items:
            if isinstance(item, Default):
                strip_next = True
                continue
            piece = self.item(item)
            if strip_next:
                piece, strip_next = piece.lstrip(), not piece.strip()
            out.append(piece)
        return "".join(out)

    def item(self, item: Any) -> str:
        if isinstance(item, Tok):
            return self.param(item) if item.kind == "param" else item.text
        if isinstance(item, Group):
            return "{" + self.sequence(item.body) + "}"
        if isinstance(item, IfBlock):
            self.in_condition = True
            try:
                text = self.sequence(item.condition)
            finally:
                self.in_condition = False
            if Condition(text).value():
                return self.sequence(item.then)
            return self.sequence(item.otherwise) if item.otherwise is not None else ""
        raise AssertionError(item)


def _defaults(items: tuple[Any, ...]) -> Iterator[Default]:
    for item in items:
        if isinstance(item, Default):
            yield item
        elif isinstance(item, Group):
            yield from _defaults(item.body)
        elif isinstance(item, IfBlock):
            for part in (item.condition, item.then, item.otherwise or ()):
                yield from _defaults(part)


def render(sql: str, parameters: Mapping[str, Any] | None = None) -> RenderResult:
    """Resolve SqlRender syntax: placeholders, parameters, defaults and blocks.

    Raises :class:`RenderError` (reason ``missing_parameter``, ``bad_condition``,
    ``unbalanced_braces`` or ``bad_default``).

    >>> render("{DEFAULT @n = 5}\\nSELECT TOP @n * FROM @vocab.concept").sql
    'SELECT TOP 5 * FROM cdm.concept'
    >>> render("SELECT 1 {@a IN (1,2)} ? {+ 1}", {"a": [2]}).sql
    'SELECT 1 + 1'
    """
    tree = Parser(tokenize(sql)).parse()
    defaults = {d.name: d.value for d in _defaults(tree)}
    renderer = _Renderer(parameters or {}, defaults)
    text = renderer.sequence(tree)
    return RenderResult(text.strip(), tuple(renderer.notes))


def to_sql_server(sql: str, parameters: Mapping[str, Any] | None = None) -> RenderResult:
    """OHDSI SQL to one plain SQL Server query: :func:`render`, then one query.

    Raises :class:`RenderError`; a script that cannot be made one query keeps the
    reason :mod:`curate.ohdsi.script` gave.
    """
    rendered = render(sql, parameters)
    return _single(rendered.sql, rendered.notes)


def _single(sql: str, notes: tuple[str, ...]) -> RenderResult:
    try:
        single = to_single_query(sql)
    except SingleQueryError as e:
        raise RenderError(e.reason, e.message) from e
    return RenderResult(single.sql, notes + single.notes)


def render_record(record: SourceRecord) -> tuple[SourceRecord, tuple[str, ...]]:
    """A record whose gold (and answer) SQL is one plain SQL Server query, and notes.

    ``ohdsi`` SQL is rendered with the record's parameters and made one query; ``tsql``
    is made one query; ``duckdb`` and ``postgres`` SQL are left as they are.  Raises
    :class:`RenderError` with the record's id.
    """
    changes: dict[str, str] = {}
    notes: list[str] = []
    pairs = (("gold_sql", "gold_dialect"), ("answer_sql", "answer_dialect"))
    for sql_field, dialect_field in pairs:
        sql, dialect = getattr(record, sql_field), getattr(record, dialect_field)
        if sql is None or dialect not in ("ohdsi", "tsql"):
            continue
        try:
            if dialect == "ohdsi":
                result = to_sql_server(sql, record.parameters)
            else:
                result = _single(sql, ())
        except RenderError as e:
            where = "" if sql_field == "gold_sql" else "answer_sql: "
            raise RenderError(e.reason, where + e.message, task_id=record.id) from e
        changes[sql_field], changes[dialect_field] = result.sql, "tsql"
        notes.extend(f"{sql_field}: {n}" for n in result.notes)
    return replace(record, **changes), tuple(notes)
