"""OHDSI SQL to plain SQL Server SQL: SqlRender templates rendered as SqlRender renders them.

OHDSI SQL is SQL Server SQL plus SqlRender's template syntax: ``@name`` parameters,
``{DEFAULT @name = value}`` defaults, and ``{condition} ? {then} : {else}`` blocks.
:func:`render` follows SqlRender (OHDSI/SqlRender, ``SqlRender.renderSql``) step by step:

1. defaults are read and cut out (:mod:`curate.ohdsi.template`);
2. parameter names are replaced as plain text, the longest name first, everywhere
   (string literals and comments included): ``@tempAchillesPrefix_1`` with
   ``tempAchillesPrefix = tmpach`` is ``tmpach_1``; a list value is joined with ``,``
   and a boolean is ``TRUE`` / ``FALSE`` (as SqlRender's R ``render`` passes them);
3. blocks are resolved on the substituted text (:mod:`curate.ohdsi.blocks`, conditions
   by :mod:`curate.ohdsi.conditions`).

The values are the record's own parameters, then the database's one schema ``cdm`` for
a schema placeholder (a name of :data:`SCHEMA_PLACEHOLDERS` or one used as ``@x.table``)
the record does not give, then the template's defaults.  Where SqlRender would leave a
parameter without a value in the SQL (outside literals and comments) the render fails:
that SQL could not run.  :func:`to_sql_server` then makes one query of the script
(:mod:`curate.ohdsi.script`), and :func:`render_record` does both for a record.

>>> render("SELECT * FROM @cdm.person WHERE year_of_birth > @y", {"y": 1950}).sql
'SELECT * FROM cdm.person WHERE year_of_birth > 1950'
>>> render("SELECT {@male} ? {8507} : {8532} AS g", {"male": True}).sql
'SELECT 8507 AS g'
>>> render("SELECT * INTO @scratch@prefix_1 FROM t", {"scratch": "#", "prefix": "tmp"}).sql
'SELECT * INTO #tmp_1 FROM t'
>>> try:
...     render("SELECT x FROM t WHERE y = @missing")
... except RenderError as e:
...     print(e.reason, "/", e.message)
missing_parameter / parameter @missing has no value
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from sqlglot import exp
from sqlglot.dialects.dialect import DialectType

from curate.ohdsi.blocks import resolve
from curate.ohdsi.errors import MISSING_PARAMETER, RenderError
from curate.ohdsi.script import single_query_tree, to_single_query
from curate.ohdsi.statements import SingleQueryError
from curate.ohdsi.template import defaults, parameter_uses, without_defaults
from curate.sources.records import SourceRecord

#: The schema every placeholder maps to.
CDM_SCHEMA = "cdm"

#: Parameters that name a schema (any ``@x.`` does too), given ``cdm`` unless the record
#: gives its own value.
SCHEMA_PLACEHOLDERS: frozenset[str] = frozenset(
    {
        "cdm",
        "vocab",
        "vocabulary",
        "results",
        "cohort",
        "scratch",
        "work",
        "temp",
        "cdm_schema",
        "vocab_schema",
        "vocabulary_schema",
        "results_schema",
        "cohort_schema",
        "cdm_database_schema",
        "vocabulary_database_schema",
        "results_database_schema",
        "cohort_database_schema",
        "target_database_schema",
        "work_database_schema",
        "cdmDatabaseSchema",
        "vocabularyDatabaseSchema",
        "resultsDatabaseSchema",
        "cohortDatabaseSchema",
        "targetDatabaseSchema",
        "workDatabaseSchema",
    }
)


@dataclass(frozen=True)
class RenderResult:
    """Rendered SQL and what was done to get it (schema mappings, defaults, ...)."""

    sql: str
    notes: tuple[str, ...] = ()


def as_text(value: Any) -> str:
    """A parameter value as SqlRender's R ``render`` passes it (``paste(x, collapse = ",")``).

    >>> as_text(True), as_text([1, 2]), as_text(1.5)
    ('TRUE', '1,2', '1.5')
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, list | tuple):
        return ",".join(as_text(v) for v in value)
    return str(value)


def _values(
    sql: str, parameters: Mapping[str, Any], template_defaults: dict[str, str]
) -> tuple[dict[str, str], list[str]]:
    """Every parameter's value (record, then schema placeholder, then default), and notes."""
    notes: list[str] = []
    values = dict(template_defaults)
    used = parameter_uses(sql)
    names = {u.name for u in used}
    schemas = {u.name for u in used if u.schema and not u.in_text} | (names & SCHEMA_PLACEHOLDERS)
    for name in sorted(schemas - set(parameters)):
        values[name] = CDM_SCHEMA
        notes.append(f"@{name} -> {CDM_SCHEMA}")
    for name, value in template_defaults.items():
        if name not in parameters and name not in schemas and name in names:
            notes.append(f"@{name} took its DEFAULT {value!r}")
    values.update((name, as_text(value)) for name, value in parameters.items() if name)
    return values, notes


def substitute(sql: str, values: Mapping[str, str]) -> str:
    """Each ``@name`` replaced by its value as text, the longest name first (as SqlRender).

    >>> substitute("@a_1 @ab @a", {"a": "x", "ab": "y"})
    'x_1 y x'
    """
    for name in sorted(values, key=lambda n: (-len(n), n)):
        sql = sql.replace("@" + name, values[name])
    return sql


def render(
    sql: str,
    parameters: Mapping[str, Any] | None = None,
    *,
    on_condition: Callable[[str], None] | None = None,
) -> RenderResult:
    """Resolve SqlRender syntax as SqlRender does: defaults, parameters, then blocks.

    Raises :class:`RenderError` (reason ``missing_parameter``, ``bad_condition`` or
    ``bad_default``).

    >>> render("{DEFAULT @n = 5}\\nSELECT TOP @n * FROM @vocab.concept").sql
    'SELECT TOP 5 * FROM cdm.concept'
    >>> render("SELECT 1 {@a IN (1, 2)} ? {+ 1}", {"a": [2]}).sql  # ' 2' is not '2'
    'SELECT 1'
    >>> render("SELECT 1 {2 IN (@a)} ? {+ 1}", {"a": [1, 2]}).sql
    'SELECT 1 + 1'
    """
    template_defaults = defaults(sql)
    body = without_defaults(sql)
    values, notes = _values(body, parameters or {}, template_defaults)
    text = resolve(substitute(body, values), on_condition)
    for use in parameter_uses(text):
        if not use.in_text:
            raise RenderError(MISSING_PARAMETER, f"parameter @{use.name} has no value")
        notes.append(f"@{use.name} has no value: left as written in a literal or comment")
    return RenderResult(text.strip(), tuple(dict.fromkeys(notes)))


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


def _single_tree(sql: str, reader: DialectType) -> tuple[exp.Expr, tuple[str, ...]]:
    try:
        return single_query_tree(sql, reader)
    except SingleQueryError as e:
        raise RenderError(e.reason, e.message) from e


#: Dialects whose SQL is rendered (SqlRender parameters) and keeps its dialect.
_KEEP_DIALECT = ("postgres", "oracle", "auto")


def _is_template(sql: str, parameters: Mapping[str, Any] | None) -> bool:
    """Whether SQL uses SqlRender parameters (outside literals and comments)."""
    return bool(parameters) or any(not u.in_text for u in parameter_uses(sql))


def render_record(record: SourceRecord) -> tuple[SourceRecord, tuple[str, ...]]:
    """A record whose gold (and answer) SQL is one plain SQL Server query, and notes.

    ``ohdsi`` SQL is rendered with the record's parameters and made one query; ``tsql``
    is made one query; ``postgres``, ``oracle`` and ``auto`` SQL that uses SqlRender
    parameters (a QueryLibrary page written for PostgreSQL or Oracle) is rendered and
    keeps its dialect; ``duckdb`` SQL is left as it is.  Raises :class:`RenderError` with
    the record's id.
    """
    rendered, notes, _ = _render_record(record, None)
    return rendered, notes


def render_record_gold_tree(
    record: SourceRecord, reader: DialectType
) -> tuple[SourceRecord, tuple[str, ...], exp.Expr | None]:
    """:func:`render_record`, except that a gold made one query (``ohdsi`` or ``tsql``)
    comes back as the tree of that query, read by ``reader`` (the transpiler's SQL Server
    dialect) as it reads SQL Server text: the transpile starts from it, with neither the
    query's text written nor that text parsed again.  The rendered record's gold is then
    the SQL Server script SqlRender gives (the record's own SQL for ``tsql``), before it
    was made one query; the third value is None for any other gold."""
    return _render_record(record, reader)


def _render_record(
    record: SourceRecord, reader: DialectType | None
) -> tuple[SourceRecord, tuple[str, ...], exp.Expr | None]:
    changes: dict[str, str] = {}
    notes: list[str] = []
    gold_tree: exp.Expr | None = None
    pairs = (("gold_sql", "gold_dialect"), ("answer_sql", "answer_dialect"))
    for sql_field, dialect_field in pairs:
        sql, dialect = getattr(record, sql_field), getattr(record, dialect_field)
        if sql is None or dialect not in ("ohdsi", "tsql", *_KEEP_DIALECT):
            continue
        if dialect in _KEEP_DIALECT and not _is_template(sql, record.parameters):
            continue
        try:
            if dialect in _KEEP_DIALECT:
                result = render(sql, record.parameters)
            elif reader is not None and sql_field == "gold_sql":
                script = render(sql, record.parameters) if dialect == "ohdsi" else RenderResult(sql)
                gold_tree, made = _single_tree(script.sql, reader)
                result = RenderResult(script.sql, script.notes + made)
            elif dialect == "ohdsi":
                result = to_sql_server(sql, record.parameters)
            else:
                result = _single(sql, ())
        except RenderError as e:
            where = "" if sql_field == "gold_sql" else "answer_sql: "
            raise RenderError(e.reason, where + e.message, task_id=record.id) from e
        changes[sql_field] = result.sql
        changes[dialect_field] = dialect if dialect in _KEEP_DIALECT else "tsql"
        notes.extend(f"{sql_field}: {n}" for n in result.notes)
    return replace(record, **changes), tuple(notes), gold_tree
