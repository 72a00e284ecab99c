"""SqlRender template syntax: tokens and the tree of ``{...}`` groups, blocks and defaults.

OHDSI SQL is SQL Server SQL plus SqlRender's template syntax: ``@name`` parameters,
``{DEFAULT @name = value}`` defaults, and ``{condition} ? {then} : {else}`` blocks.
:func:`tokenize` splits the text (string literals, quoted identifiers and comments stay
text) and :class:`Parser` builds the tree by recursive descent; nothing here rewrites
SQL text with patterns.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from curate.ohdsi.errors import BAD_DEFAULT, UNBALANCED_BRACES, RenderError


@dataclass(frozen=True)
class Tok:
    kind: str  # "text" | "param" | "{" | "}" | "?" | ":"
    text: str  # the source text
    name: str = ""  # for "param": the name without @
    lenient: bool = False  # for "param": inside a string literal or comment
    schema: bool = False  # for "param": followed by ".identifier"


def _ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def _scan_params(chunk: str, lenient: bool) -> Iterator[Tok]:
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
                yield Tok("text", chunk[start:i])
            schema = j + 1 < n and chunk[j] == "." and _ident_start(chunk[j + 1])
            yield Tok("param", chunk[i:j], chunk[i + 1 : j], lenient, schema)
            i = start = j
            continue
        i += 1
    if start < n:
        yield Tok("text", chunk[start:])


def tokenize(sql: str) -> list[Tok]:
    """Template tokens of OHDSI SQL.

    String literals, quoted identifiers and comments are text (their parameters are
    marked lenient); ``{ } ? :`` elsewhere are punctuation.

    >>> [(t.kind, t.text) for t in tokenize("{@a}?{'}'}")]
    [('{', '{'), ('param', '@a'), ('}', '}'), ('?', '?'), ('{', '{'), ('text', "'}'"), ('}', '}')]
    """
    tokens: list[Tok] = []
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
            tokens.append(Tok(c, c))
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
class Group:
    """``{ ... }`` that is not part of a block: braces kept as text."""

    body: tuple[Any, ...]


@dataclass(frozen=True)
class IfBlock:
    condition: tuple[Any, ...]
    then: tuple[Any, ...]
    otherwise: tuple[Any, ...] | None


@dataclass(frozen=True)
class Default:
    name: str
    value: str


class Parser:
    """Recursive descent over template tokens: sequence := (text | param | brace-item)*."""

    def __init__(self, tokens: list[Tok]) -> None:
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
            items.append(tok if tok.kind == "param" else Tok("text", tok.text))
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
            return Group(body)
        self.pos = question + 1
        then_at = self._next_is("{")
        if then_at is None:
            self.pos = after_group  # "{x} ?" followed by no block: plain text
            return Group(body)
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
        return IfBlock(body, then, otherwise)


def _flat_text(items: tuple[Any, ...]) -> str:
    """The source text of a parsed sequence (a parameter as written)."""
    out = []
    for item in items:
        if isinstance(item, Tok):
            out.append(item.text)
        elif isinstance(item, Group):
            out.append("{" + _flat_text(item.body) + "}")
        else:
            raise RenderError(BAD_DEFAULT, "a block inside a {DEFAULT ...}")
    return "".join(out)


def _as_default(body: tuple[Any, ...]) -> Default | None:
    """``{DEFAULT @name = value}`` as a default, else None."""
    if not body or not isinstance(body[0], Tok) or body[0].kind != "text":
        return None
    if not body[0].text.lstrip().startswith("DEFAULT"):
        return None
    rest = body[1:]
    if body[0].text.strip() != "DEFAULT" or not rest or getattr(rest[0], "kind", "") != "param":
        raise RenderError(BAD_DEFAULT, f"cannot read {{{_flat_text(body)}}}")
    before, sep, value = _flat_text(rest[1:]).partition("=")
    if not sep or before.strip():
        raise RenderError(BAD_DEFAULT, f"cannot read {{{_flat_text(body)}}}")
    return Default(rest[0].name, _unquote(value.strip()))


def _unquote(s: str) -> str:
    if len(s) > 1 and s[0] == s[-1] and s[0] in "'\"":
        return s[1:-1]
    return s


