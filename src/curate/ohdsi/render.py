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
:func:`to_sql_server` then makes one query of the script (:mod:`curate.single_query`),
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

from curate.single_query import SingleQueryError, to_single_query
from curate.sources import SourceRecord
from score.errors import SqlgoldError

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

# Reasons a render fails, for counting.
MISSING_PARAMETER = "missing_parameter"
BAD_CONDITION = "bad_condition"
UNBALANCED_BRACES = "unbalanced_braces"
BAD_DEFAULT = "bad_default"


class RenderError(SqlgoldError):
    """OHDSI SQL that cannot be made plain SQL Server SQL; ``reason`` names why."""

    stage = "ohdsi"

    def __init__(self, reason: str, message: str, *, task_id: str | None = None) -> None:
        super().__init__(message, task_id=task_id)
        self.reason = reason


@dataclass(frozen=True)
class RenderResult:
    """Rendered SQL and what was done to get it (schema mappings, defaults, ...)."""

    sql: str
    notes: tuple[str, ...] = ()


# ---------------------------------------------------------------------------------------
# Tokens: text, parameters and the four template punctuation marks.


@dataclass(frozen=True)
class _Tok:
    kind: str  # "text" | "param" | "{" | "}" | "?" | ":"
    text: str  # the source text
    name: str = ""  # for "param": the name without @
    lenient: bool = False  # for "param": inside a string literal or comment
    schema: bool = False  # for "param": followed by ".identifier"


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _scan_params(chunk: str, lenient: bool) -> Iterator[_Tok]:
    """Split a piece of text at ``@name`` parameters (``@@name`` is T-SQL, not one)."""
    i, start, n = 0, 0, len(chunk)
    while i < n:
        if chunk[i] == "@" and chunk.startswith("@@", i):
            i += 2
            while i < n and _ident_char(chunk[i]):
                i += 1
            continue
        if chunk[i] == "@" and i + 1 < n and _ident_start(chunk[i + 1]):
            j = i + 1
            while j < n and _ident_char(chunk[j]):
                j += 1
            if start < i:
                yield _Tok("text", chunk[start:i])
            schema = j + 1 < n and chunk[j] == "." and _ident_start(chunk[j + 1])
            yield _Tok("param", chunk[i:j], chunk[i + 1 : j], lenient, schema)
            i = start = j
            continue
        i += 1
    if start < n:
        yield _Tok("text", chunk[start:])


def tokenize(sql: str) -> list[_Tok]:
    """Template tokens of OHDSI SQL.

    String literals, quoted identifiers and comments are text (their parameters are
    marked lenient); ``{ } ? :`` elsewhere are punctuation.

    >>> [(t.kind, t.text) for t in tokenize("{@a}?{'}'}")]
    [('{', '{'), ('param', '@a'), ('}', '}'), ('?', '?'), ('{', '{'), ('text', "'}'"), ('}', '}')]
    """
    tokens: list[_Tok] = []
    plain_start = 0
    i, n = 0, len(sql)

    def flush(end: int) -> None:
        if plain_start < end:
            tokens.extend(_scan_params(sql[plain_start:end], lenient=False))

    while i < n:
        c = sql[i]
        close = None
        if c in "'\"[":
            close = {"'": "'", '"': '"', "[": "]"}[c]
            j = i + 1
            while j < n:
                if sql[j] == close:
                    if j + 1 < n and sql[j + 1] == close:  # doubled quote inside
                        j += 2
                        continue
                    break
                j += 1
            end = min(j + 1, n)
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            end = n if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            end = n if j < 0 else j + 2
        elif c in "{}?:":
            flush(i)
            tokens.append(_Tok(c, c))
            i += 1
            plain_start = i
            continue
        else:
            i += 1
            continue
        flush(i)
        tokens.extend(_scan_params(sql[i:end], lenient=True))
        i = plain_start = end
    flush(n)
    return tokens


# ---------------------------------------------------------------------------------------
# Template tree.


@dataclass(frozen=True)
class _Group:
    """``{ ... }`` that is not part of a block: braces kept as text."""

    body: tuple[Any, ...]


@dataclass(frozen=True)
class _IfBlock:
    condition: tuple[Any, ...]
    then: tuple[Any, ...]
    otherwise: tuple[Any, ...] | None


@dataclass(frozen=True)
class _Default:
    name: str
    value: str


class _Parser:
    """Recursive descent over template tokens: sequence := (text | param | brace-item)*."""

    def __init__(self, tokens: list[_Tok]) -> None:
        self.tokens = tokens
        self.pos = 0

    def parse(self) -> tuple[Any, ...]:
        body = self._sequence(inside=False)
        if self.pos < len(self.tokens):
            raise RenderError(UNBALANCED_BRACES, "'}' without '{'")
        return body

    def _sequence(self, inside: bool) -> tuple[Any, ...]:
        items: list[Any] = []
        while self.pos < len(self.tokens):
            tok = self.tokens[self.pos]
            if tok.kind == "}":
                if inside:
                    return tuple(items)
                raise RenderError(UNBALANCED_BRACES, "'}' without '{'")
            if tok.kind == "{":
                items.append(self._brace_item())
                continue
            self.pos += 1
            items.append(tok if tok.kind == "param" else _Tok("text", tok.text))
        if inside:
            raise RenderError(UNBALANCED_BRACES, "'{' without '}'")
        return tuple(items)

    def _group(self) -> tuple[Any, ...]:
        self.pos += 1  # "{"
        body = self._sequence(inside=True)
        self.pos += 1  # "}"
        return body

    def _skip_blank(self, at: int) -> int:
        while (
            at < len(self.tokens)
            and self.tokens[at].kind == "text"
            and not self.tokens[at].text.strip()
        ):
            at += 1
        return at

    def _next_is(self, kind: str) -> int | None:
        """Index of the next token after blank text if it is ``kind``."""
        at = self._skip_blank(self.pos)
        return at if at < len(self.tokens) and self.tokens[at].kind == kind else None

    def _brace_item(self) -> Any:
        body = self._group()
        default = _as_default(body)
        if default is not None:
            return default
        after_group = self.pos
        question = self._next_is("?")
        if question is None:
            return _Group(body)
        self.pos = question + 1
        then_at = self._next_is("{")
        if then_at is None:
            self.pos = after_group  # "{x} ?" followed by no block: plain text
            return _Group(body)
        self.pos = then_at
        then = self._group()
        otherwise = None
        colon = self._next_is(":")
        if colon is not None:
            saved, self.pos = self.pos, colon + 1
            else_at = self._next_is("{")
            if else_at is None:
                self.pos = saved
            else:
                self.pos = else_at
                otherwise = self._group()
        return _IfBlock(body, then, otherwise)


def _flat_text(items: tuple[Any, ...]) -> str:
    """The source text of a parsed sequence (a parameter as written)."""
    out = []
    for item in items:
        if isinstance(item, _Tok):
            out.append(item.text)
        elif isinstance(item, _Group):
            out.append("{" + _flat_text(item.body) + "}")
        else:
            raise RenderError(BAD_DEFAULT, "a block inside a {DEFAULT ...}")
    return "".join(out)


def _as_default(body: tuple[Any, ...]) -> _Default | None:
    """``{DEFAULT @name = value}`` as a default, else None."""
    if not body or not isinstance(body[0], _Tok) or body[0].kind != "text":
        return None
    if not body[0].text.lstrip().startswith("DEFAULT"):
        return None
    rest = body[1:]
    if body[0].text.strip() != "DEFAULT" or not rest or getattr(rest[0], "kind", "") != "param":
        raise RenderError(BAD_DEFAULT, f"cannot read {{{_flat_text(body)}}}")
    before, sep, value = _flat_text(rest[1:]).partition("=")
    if not sep or before.strip():
        raise RenderError(BAD_DEFAULT, f"cannot read {{{_flat_text(body)}}}")
    return _Default(rest[0].name, _unquote(value.strip()))


def _unquote(s: str) -> str:
    if len(s) > 1 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


# ---------------------------------------------------------------------------------------
# Conditions.


def _condition_tokens(text: str) -> list[tuple[str, str]]:
    """(kind, value) tokens of a condition: op, str (quotes removed), word."""
    out: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith(("==", "!=", "<>", "&&", "||"), i):
            op = text[i : i + 2]
            out.append(("op", {"&&": "&", "||": "|", "<>": "!="}.get(op, op)))
            i += 2
        elif c in "&|!(),":
            out.append(("op", c))
            i += 1
        elif c in "'\"":
            j = text.find(c, i + 1)
            if j < 0:
                raise RenderError(BAD_CONDITION, f"unclosed quote in condition {{{text}}}")
            out.append(("str", text[i + 1 : j]))
            i = j + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in "&|!(),'\"=<>":
                j += 1
            if j == i:
                raise RenderError(BAD_CONDITION, f"cannot read condition {{{text}}}")
            out.append(("word", text[i:j]))
            i = j
    return out


class _Condition:
    """Evaluates a SqlRender condition after substitution.

    expr := term (('&' term)* | ('|' term)*);  term := '!' term | '(' expr ')' | test;
    test := value [('==' | '!=') value | IN '(' value (',' value)* ')'].
    A value compared is text (quotes removed); a lone value must be true/false/1/0.

    >>> _Condition("1 IN (2, 1) & !('a' == b)").value()
    True
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _condition_tokens(text)
        self.pos = 0

    def _fail(self, why: str) -> RenderError:
        return RenderError(BAD_CONDITION, f"condition {{{self.text}}}: {why}")

    def _peek(self) -> tuple[str, str] | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def _take_op(self, op: str) -> bool:
        if self._peek() == ("op", op):
            self.pos += 1
            return True
        return False

    def value(self) -> bool:
        result = self._expr()
        if self.pos != len(self.toks):
            raise self._fail(f"unexpected {self.toks[self.pos][1]!r}")
        return result

    def _expr(self) -> bool:
        result = self._term()
        joiner = None
        while (tok := self._peek()) in (("op", "&"), ("op", "|")):
            if joiner is not None and tok[1] != joiner:
                raise self._fail("mixes & and | without parentheses")
            joiner = tok[1]
            self.pos += 1
            right = self._term()
            result = (result and right) if joiner == "&" else (result or right)
        return result

    def _term(self) -> bool:
        if self._take_op("!"):
            return not self._term()
        if self._take_op("("):
            result = self._expr()
            if not self._take_op(")"):
                raise self._fail("missing ')'")
            return result
        return self._test()

    def _operand(self) -> tuple[str, bool]:
        """(text, quoted); an operand left empty by substitution is ''."""
        tok = self._peek()
        if tok is not None and tok[0] in ("str", "word") and tok[1].upper() != "IN":
            self.pos += 1
            return tok[1], tok[0] == "str"
        return "", False

    def _test(self) -> bool:
        left, quoted = self._operand()
        if self._take_op("=="):
            return left == self._operand()[0]
        if self._take_op("!="):
            return left != self._operand()[0]
        tok = self._peek()
        if tok is not None and tok[0] == "word" and tok[1].upper() == "IN":
            self.pos += 1
            if not self._take_op("("):
                raise self._fail("IN needs '('")
            options = [self._operand()[0]]
            while self._take_op(","):
                options.append(self._operand()[0])
            if not self._take_op(")"):
                raise self._fail("missing ')' after IN list")
            return left in options
        literal = left.lower()
        if not quoted and literal in ("true", "1"):
            return True
        if not quoted and literal in ("false", "0"):
            return False
        raise self._fail(f"{left!r} is not true or false")


# ---------------------------------------------------------------------------------------
# Rendering.


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

    def param(self, tok: _Tok) -> str:
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
            if isinstance(item, _Default):
                strip_next = True
                continue
            piece = self.item(item)
            if strip_next:
                piece, strip_next = piece.lstrip(), not piece.strip()
            out.append(piece)
        return "".join(out)

    def item(self, item: Any) -> str:
        if isinstance(item, _Tok):
            return self.param(item) if item.kind == "param" else item.text
        if isinstance(item, _Group):
            return "{" + self.sequence(item.body) + "}"
        if isinstance(item, _IfBlock):
            self.in_condition = True
            try:
                text = self.sequence(item.condition)
            finally:
                self.in_condition = False
            if _Condition(text).value():
                return self.sequence(item.then)
            return self.sequence(item.otherwise) if item.otherwise is not None else ""
        raise AssertionError(item)


def _defaults(items: tuple[Any, ...]) -> Iterator[_Default]:
    for item in items:
        if isinstance(item, _Default):
            yield item
        elif isinstance(item, _Group):
            yield from _defaults(item.body)
        elif isinstance(item, _IfBlock):
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
    tree = _Parser(tokenize(sql)).parse()
    defaults = {d.name: d.value for d in _defaults(tree)}
    renderer = _Renderer(parameters or {}, defaults)
    text = renderer.sequence(tree)
    return RenderResult(text.strip(), tuple(renderer.notes))


def to_sql_server(sql: str, parameters: Mapping[str, Any] | None = None) -> RenderResult:
    """OHDSI SQL to one plain SQL Server query: :func:`render`, then one query.

    Raises :class:`RenderError`; a script that cannot be made one query keeps the
    reason :mod:`curate.single_query` gave.
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
