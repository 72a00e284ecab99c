"""SqlRender template text: ``{DEFAULT ...}`` values, and where ``@name`` parameters stand.

SqlRender (OHDSI/SqlRender) works on the template as plain text: defaults are read and
cut out first, parameter names are then replaced as text (longest name first), and the
``{condition} ? {...}`` blocks are resolved last (:mod:`curate.ohdsi.blocks`).  This
module does the first step as SqlRender does it and also lexes the text far enough to
tell where a parameter stands: inside a string literal, quoted identifier or comment,
or in the SQL itself, and whether it is used as a schema (``@x.table``).

>>> defaults("{DEFAULT @n = 5}\\n{DEFAULT @s = 'cdm'}SELECT 1")
{'n': '5', 's': 'cdm'}
>>> without_defaults("{DEFAULT @n = 5}\\n  SELECT TOP @n 1")
'SELECT TOP @n 1'
>>> [(u.name, u.in_text, u.schema) for u in parameter_uses("SELECT '@a' FROM @b.t -- @c")]
[('a', True, False), ('b', False, True), ('c', True, False)]
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from curate.ohdsi.conditions import trim, unquote
from curate.ohdsi.errors import BAD_DEFAULT, RenderError

_DEFAULT = "{DEFAULT"
_TEXT_START = re.compile(r"['\"\[]|--|/\*")
#: The rest of a name: ``\w`` is a character ``str.isalnum()`` accepts, or ``_``.
_NAME_REST = re.compile(r"\w*")
_REGEX_SPACE = " \t\n\x0b\f\r"  # Java's \s


def defaults(sql: str) -> dict[str, str]:
    """``{DEFAULT @name = value}`` values as SqlRender reads them.

    The name is the text before the first ``=`` (one leading ``@`` dropped); the value
    starts two characters after the ``=`` (SqlRender assumes ``= value``), trimmed and
    stripped of one pair of quotes.  A later default of the same name wins.

    >>> defaults("{DEFAULT @a = 'x y'} {DEFAULT @b=12}")
    {'a': 'x y', 'b': '2'}
    """
    found: dict[str, str] = {}
    end = 0
    opener = _DEFAULT + " "
    while (start := sql.find(opener, end)) >= 0:
        end = sql.find("}", start + len(opener))
        if end < 0:
            break
        body = sql[start + len(opener) : end]
        equals = body.find("=")
        if equals < 0:
            continue
        name = trim(body[:equals])
        name = name[1:] if name.startswith("@") else name
        if equals + 2 > len(body):
            raise RenderError(BAD_DEFAULT, f"cannot read {{DEFAULT {body}}}: no value")
        found[name] = unquote(trim(body[equals + 2 :]))
    return found


def without_defaults(sql: str) -> str:
    """The template with every ``{DEFAULT ...}`` and the white space after it removed."""
    out: list[str] = []
    at = 0
    while (start := sql.find(_DEFAULT, at)) >= 0:
        close = sql.find("}", start)
        if close < 0:
            break
        out.append(sql[at:start])
        at = close + 1
        while at < len(sql) and sql[at] in _REGEX_SPACE:
            at += 1
    out.append(sql[at:])
    return "".join(out)


@dataclass(frozen=True)
class ParameterUse:
    """One ``@name`` in the text: the longest identifier after ``@``."""

    name: str
    start: int  # index of '@'
    in_text: bool  # inside a string literal, quoted identifier or comment
    schema: bool  # followed by '.identifier'


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _pieces(sql: str) -> Iterator[tuple[int, int, bool]]:
    """(start, end, in_text) pieces: SQL, or literals / quoted names / comments."""
    i = plain = 0
    n = len(sql)
    while i < n:
        found = _TEXT_START.search(sql, i)  # the next quote, bracket or comment
        if found is None:
            break
        i = found.start()
        c = sql[i]
        if c in "'\"[":
            close = "]" if c == "[" else c
            j = i + 1
            while (j := sql.find(close, j)) >= 0 and sql.startswith(close, j + 1):
                j += 2  # a doubled quote inside
            end = n if j < 0 else j + 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            end = n if j < 0 else j
        else:  # "/*"
            j = sql.find("*/", i + 2)
            end = n if j < 0 else j + 2
        if plain < i:
            yield plain, i, False
        yield i, end, True
        i = plain = end
    if plain < n:
        yield plain, n, False


def parameter_uses(sql: str) -> list[ParameterUse]:
    """Every ``@name`` of ``sql`` (``@@name`` is T-SQL's, not a parameter)."""
    uses: list[ParameterUse] = []
    for start, end, in_text in _pieces(sql):
        i = start
        while (i := sql.find("@", i, end)) >= 0:  # only an '@' starts a name
            if sql.startswith("@@", i):
                i = _NAME_REST.match(sql, i + 2, end).end()  # type: ignore[union-attr]
                continue
            if sql[i] == "@" and i + 1 < end and _ident_start(sql[i + 1]):
                j = _NAME_REST.match(sql, i + 1, end).end()  # type: ignore[union-attr]
                schema = j + 1 < end and sql[j] == "." and _ident_start(sql[j + 1])
                uses.append(ParameterUse(sql[i + 1 : j], i, in_text, schema))
                i = j
                continue
            i += 1
    return uses
