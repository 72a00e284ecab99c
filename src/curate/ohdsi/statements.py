"""The statements of a SQL Server script, and the temp tables they name.

A script is split at ``;`` and ``GO`` lines by tokens (never by patterns over the text)
and each statement is parsed on its own, so an ``IF`` takes only its own statement.
Anything that cannot be made one query raises :class:`SingleQueryError` with one of
:data:`REASONS`.
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlglot
from sqlglot import exp
from sqlglot.dialects.dialect import Dialect, DialectType
from sqlglot.errors import ParseError, TokenError
from sqlglot.tokens import Token

from score.errors import SqlgoldError

# Reasons a script cannot be made one query.
PARSE_ERROR = "sql_parse_error"
NO_QUERY = "no_final_select"
SEVERAL_QUERIES = "several_final_selects"
TEMP_UNDEFINED = "temp_table_used_before_definition"
TEMP_REDEFINED = "temp_table_defined_twice"
TEMP_MODIFIED = "temp_table_modified"
TEMP_SELF_REFERENCE = "temp_table_reads_itself"
TEMP_COLUMNS = "temp_table_columns"
WRITES_DATABASE = "writes_to_database"
CONTROL_FLOW = "control_flow"
VARIABLE = "unresolved_variable"
UNSUPPORTED = "unsupported_statement"
NAME_CONFLICT = "cte_name_conflict"

REASONS: tuple[str, ...] = (
    PARSE_ERROR,
    NO_QUERY,
    SEVERAL_QUERIES,
    TEMP_UNDEFINED,
    TEMP_REDEFINED,
    TEMP_MODIFIED,
    TEMP_SELF_REFERENCE,
    TEMP_COLUMNS,
    WRITES_DATABASE,
    CONTROL_FLOW,
    VARIABLE,
    UNSUPPORTED,
    NAME_CONFLICT,
)

_CONTROL_WORDS = frozenset({"WHILE", "END", "GOTO", "RETURN", "BREAK", "CONTINUE", "WAITFOR"})


class SingleQueryError(SqlgoldError):
    """A script that cannot soundly be made one query; ``reason`` is one of REASONS."""

    stage = "ohdsi"

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


# ---------------------------------------------------------------------------------------
# Statements.


def _statements(sql: str, dialect: DialectType) -> list[tuple[str, list[str], list[Token]]]:
    """Each statement's text, its first two words (upper case) and its tokens, split by
    tokens."""
    try:
        tokens = Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError as e:
        raise SingleQueryError(PARSE_ERROR, f"cannot tokenize: {e}") from None
    out: list[tuple[str, list[str], list[Token]]] = []
    start = 0  # where the current statement's text begins
    first = 0  # its first token
    words: list[str] = []
    for i, tok in enumerate(tokens):
        is_go = (
            tok.text.upper() == "GO"
            and (i == 0 or tokens[i - 1].line < tok.line)
            and (i + 1 == len(tokens) or tokens[i + 1].line > tok.line)
        )
        if tok.token_type == sqlglot.TokenType.SEMICOLON or is_go:
            if words:
                out.append((sql[start : tok.start].strip(), words, tokens[first:i]))
            start, first, words = tok.end + 1, i + 1, []
        elif len(words) < 2:
            words.append(tok.text.upper())
    if words:
        out.append((sql[start:].strip(), words, tokens[first:]))
    return out


def split_statements(sql: str, dialect: DialectType = "tsql") -> list[str]:
    """The statements of a script as text, split at ``;`` and ``GO`` lines (by tokens).

    >>> split_statements("SELECT ';' AS x; SELECT 2\\nGO\\nSELECT 3")
    ["SELECT ';' AS x", 'SELECT 2', 'SELECT 3']
    """
    return [text for text, _, _ in _statements(sql, dialect)]


def parse_statements(sql: str, dialect: DialectType = "tsql") -> list[tuple[str, exp.Expr]]:
    """Each statement of a script, as written and parsed on its own (an IF takes only its
    own), from the script's one tokenization.  A dialect with a ``parse_tokens`` method
    (the transpiler's SQL Server reader) builds its statements with it."""
    reader = Dialect.get_or_raise(dialect)
    parse = getattr(reader, "parse_tokens", None) or reader.parser().parse
    statements: list[tuple[str, exp.Expr]] = []
    for text, words, tokens in _statements(sql, dialect):
        words = words + ["", ""]
        if words[0] in _CONTROL_WORDS or (
            words[0] == "BEGIN" and words[1] not in ("TRAN", "TRANSACTION")
        ):
            raise SingleQueryError(CONTROL_FLOW, f"control flow: {short(text)}")
        try:
            parsed = parse(tokens, sql)
        except ParseError as e:
            detail = e.errors[0] if e.errors else {}
            where = f" (line {detail['line']})" if detail.get("line") else ""
            what = detail.get("description") or str(e).splitlines()[0]
            if "<Token" in what and detail.get("highlight"):
                what = f"{what.split('<Token')[0].rstrip()} {detail['highlight']!r}"
            raise SingleQueryError(
                PARSE_ERROR, f"cannot parse {short(text)!r}{where}: {what}"
            ) from None
        statements.extend((text, s) for s in parsed if s is not None)
    return statements


def short(text: str, width: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 3] + "..."


# ---------------------------------------------------------------------------------------
# Temp tables and variables.


def temp_name(table: exp.Expr) -> str | None:
    """``#t`` / ``##t`` (lower case) if ``table`` is a temp table reference, else None."""
    if not isinstance(table, exp.Table) or table.args.get("db"):
        return None
    return temp_identifier(table.this)


def temp_identifier(ident: exp.Expr | None) -> str | None:
    if not isinstance(ident, exp.Identifier):
        return None
    if ident.args.get("global_"):
        return "##" + ident.name.lower()
    if ident.args.get("temporary"):
        return "#" + ident.name.lower()
    return None


def temp_refs(node: exp.Expr) -> Iterator[str]:
    for table in node.find_all(exp.Table):
        if (name := temp_name(table)) is not None:
            yield name
