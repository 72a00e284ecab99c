"""Where in a query a parser stopped, as one line a person can act on.

DuckDB reports a syntax error over three lines (the message, ``LINE n:`` with the line's
text, possibly cut to ``...``, and a caret under the token); sqlglot reports the line,
the column and the text around it.  Both are reduced to one line that keeps the
message and adds ``(line L, column C: "...text near it...")``, so errors stay one line
and still point at the spot.

>>> msg = 'Parser Error: syntax error at or near "x"\\n\\nLINE 2:   2 FORM x\\n' + " " * 17 + "^"
>>> duckdb_parse_message(msg, "SELECT 1,\\n  2 FORM x")
'Parser Error: syntax error at or near "x" (line 2, column 10: "  2 FORM x")'
>>> near("SELECT a FROM t WHERE", 2, 13)
'(line 2, column 13: "SELECT a FROM t WHERE")'

sqlglot names what is missing by its own classes; :func:`plain_sqlglot_message` says it
in SQL's words:

>>> plain_sqlglot_message(
...     "Required keyword: 'expression' missing for <class 'sqlglot.expressions.query.Limit'>")
'LIMIT is incomplete: its expression is missing'

and the token it stopped at by its text, not its Python form:

>>> plain_sqlglot_message("Expected table name but got <Token token_type: TokenType.SENTINEL, "
...     "text: SENTINEL, line: 1, col: 1, start: 0, end: 0, comments: []>. Line 1, Col: 13.")
'Expected table name but got the end of the query. Line 1, Col: 13.'
"""

from __future__ import annotations

import re

_LINE = re.compile(r"^LINE (\d+): (.*)$")
_REQUIRED = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")
_SPLIT_WORDS = re.compile(r"(?<=[a-z])(?=[A-Z])")
_TOKEN = re.compile(
    r"<Token token_type: TokenType\.(\w+), text: (.*?), line: \d+, col: \d+, start: \d+, "
    r"end: \d+, comments: \[.*?\]>"
)


def plain_sqlglot_message(message: str) -> str:
    """sqlglot's parse error with its class names said as SQL: ``Required keyword:
    'expression' missing for <class '...Limit'>`` is ``LIMIT is incomplete: its
    expression is missing``; other messages are kept."""

    def plain(found: re.Match[str]) -> str:
        clause = _SPLIT_WORDS.sub(" ", found.group(2)).upper()
        return f"{clause} is incomplete: its {found.group(1).replace('_', ' ')} is missing"

    def token(found: re.Match[str]) -> str:
        if found.group(1) == "SENTINEL":
            return "the end of the query"
        return repr(found.group(2))

    return _TOKEN.sub(token, _REQUIRED.sub(plain, message))


_CONTEXT = 30


def near(line_text: str, line: int, column: int) -> str:
    """``(line L, column C: "text")`` with up to 30 characters each side of the column."""
    start = max(column - 1 - _CONTEXT, 0)
    text = line_text[start : column - 1 + _CONTEXT]
    prefix = "..." if start else ""
    suffix = "..." if column - 1 + _CONTEXT < len(line_text) else ""
    return f'(line {line}, column {column}: "{prefix}{text}{suffix}")'


def duckdb_parse_message(message: str, sql: str) -> str:
    """DuckDB's parser error as one line with its position in ``sql`` (the first line of
    the message alone when it has no ``LINE n:`` part)."""
    lines = message.strip().splitlines()
    first = lines[0] if lines else message
    for i, text in enumerate(lines):
        found = _LINE.match(text)
        if not found or i + 1 >= len(lines) or "^" not in lines[i + 1]:
            continue
        number, shown = int(found.group(1)), found.group(2)
        offset = lines[i + 1].index("^") - len(f"LINE {number}: ")
        source = sql.splitlines()[number - 1] if number <= len(sql.splitlines()) else shown
        visible = shown.removeprefix("...").removesuffix("...")
        at = source.find(visible)
        if at < 0:
            return f"{first} (line {number})"
        column = at + offset - (3 if shown.startswith("...") else 0) + 1
        return f"{first} {near(source, number, column)}"
    return first
