"""A fixed "today": current-date and current-time calls become literals.

Relative-time questions ("in the last year") only have stable answers when "now" is
fixed.  :func:`pin_today` rewrites every current-date / current-time call in a DuckDB
query tree to a literal of the fixed day (times become midnight of that day):

>>> import sqlglot, datetime
>>> tree = sqlglot.parse_one("SELECT CURRENT_DATE - 1, now()", read="duckdb")
>>> pinned, changed = pin_today(tree, datetime.date(2025, 12, 31))
>>> pinned.sql("duckdb"), changed
("SELECT CAST('2025-12-31' AS DATE) - 1, CAST('2025-12-31 00:00:00' AS TIMESTAMP)", True)
>>> uses_current_time(sqlglot.parse_one("SELECT getdate()", read="tsql"))
True
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cache

from sqlglot import exp

#: Functions that read the clock, by lower-case name, and what they return.
_CLOCK_FUNCTIONS = {
    "now": "TIMESTAMP",
    "getdate": "TIMESTAMP",
    "sysdatetime": "TIMESTAMP",
    "getutcdate": "TIMESTAMP",
    "sysutcdatetime": "TIMESTAMP",
    "current_timestamp": "TIMESTAMP",
    "get_current_timestamp": "TIMESTAMP",
    "transaction_timestamp": "TIMESTAMP",
    "statement_timestamp": "TIMESTAMP",
    "localtimestamp": "TIMESTAMP",
    "today": "DATE",
    "current_date": "DATE",
    "curdate": "DATE",
    "current_time": "TIME",
    "get_current_time": "TIME",
    "localtime": "TIME",
}

_CLOCK_NODES: dict[type[exp.Expr], str] = {
    exp.CurrentDate: "DATE",
    exp.CurrentTimestamp: "TIMESTAMP",
    exp.CurrentDatetime: "TIMESTAMP",
    exp.Localtimestamp: "TIMESTAMP",
    exp.CurrentTime: "TIME",
}
if hasattr(exp, "Localtime"):
    _CLOCK_NODES[exp.Localtime] = "TIME"


def clock_function_names() -> frozenset[str]:
    """Lower-case names of the functions that read the clock (as an engine's parser
    reports them).

    >>> "current_date" in clock_function_names()
    True
    """
    return frozenset(_CLOCK_FUNCTIONS)


#: Every node class :func:`clock_type` may say yes to, for one ``isinstance`` per node.
_MAY_READ_CLOCK = (*_CLOCK_NODES, exp.Anonymous)


def clock_type(node: exp.Expr) -> str | None:
    """``DATE``, ``TIMESTAMP`` or ``TIME`` if ``node`` reads the clock, else None."""
    if not isinstance(node, _MAY_READ_CLOCK):
        return None
    for cls, kind in _CLOCK_NODES.items():
        if isinstance(node, cls):
            return kind
    return _CLOCK_FUNCTIONS.get(str(node.this).lower())


def uses_current_time(tree: exp.Expr) -> bool:
    """Whether the query reads the current date or time anywhere."""
    return any(clock_type(node) is not None for node in tree.walk())


def _literal(kind: str, today: dt.date) -> exp.Expr:
    text = {
        "DATE": today.isoformat(),
        "TIMESTAMP": f"{today.isoformat()} 00:00:00",
        "TIME": "00:00:00",
    }[kind]
    return exp.cast(exp.Literal.string(text), kind)


def pin_today(tree: exp.Expr, today: dt.date) -> tuple[exp.Expr, bool]:
    """A copy of ``tree`` with every clock call replaced by ``today``, and whether any
    was; a query that never reads the clock is returned as it is (no copy)."""
    if not uses_current_time(tree):
        return tree, False
    changed = False

    def replace(node: exp.Expr) -> exp.Expr:
        nonlocal changed
        kind = clock_type(node)
        if kind is None:
            return node
        changed = True
        return _literal(kind, today)

    return tree.transform(replace, copy=True), changed


# -- pinning in the text: what a query reads of the clock, and nothing else ------------


@dataclass(frozen=True)
class EngineClocks:
    """The clock readers an engine's parser accepts and the type each returns:
    ``keywords`` are written bare (``CURRENT_DATE``; those in ``precision`` may take a
    ``(n)``), ``functions`` are called with ``()`` (upper-case names)."""

    keywords: dict[str, str]
    precision: frozenset[str]
    functions: dict[str, str]


#: Per engine dialect.  DuckDB's timestamps are pinned as TIMESTAMP, as its golds have
#: always been; PostgreSQL's as the types its own return.
ENGINE_CLOCKS: dict[str, EngineClocks] = {
    "duckdb": EngineClocks(
        keywords={
            "CURRENT_DATE": "DATE",
            "CURRENT_TIMESTAMP": "TIMESTAMP",
            "CURRENT_TIME": "TIME",
            "LOCALTIMESTAMP": "TIMESTAMP",
            "LOCALTIME": "TIME",
        },
        precision=frozenset(),
        functions={
            "CURRENT_DATE": "DATE",
            "TODAY": "DATE",
            "NOW": "TIMESTAMP",
            "GET_CURRENT_TIMESTAMP": "TIMESTAMP",
            "TRANSACTION_TIMESTAMP": "TIMESTAMP",
            "CURRENT_LOCALTIMESTAMP": "TIMESTAMP",
            "GET_CURRENT_TIME": "TIME",
            "CURRENT_LOCALTIME": "TIME",
        },
    ),
    "postgres": EngineClocks(
        keywords={
            "CURRENT_DATE": "DATE",
            "CURRENT_TIMESTAMP": "TIMESTAMPTZ",
            "CURRENT_TIME": "TIMETZ",
            "LOCALTIMESTAMP": "TIMESTAMP",
            "LOCALTIME": "TIME",
        },
        precision=frozenset({"CURRENT_TIMESTAMP", "CURRENT_TIME", "LOCALTIMESTAMP", "LOCALTIME"}),
        functions={
            "NOW": "TIMESTAMPTZ",
            "TRANSACTION_TIMESTAMP": "TIMESTAMPTZ",
            "STATEMENT_TIMESTAMP": "TIMESTAMPTZ",
            "CLOCK_TIMESTAMP": "TIMESTAMPTZ",
            "TIMEOFDAY": "TEXT",
        },
    ),
}

#: PostgreSQL's special date/time input strings that read the clock, as the days they
#: stand for (``'today'::date``; ``'now'`` is midnight, as every pinned time).
_SPECIAL_DAYS = {"today": 0, "now": 0, "tomorrow": 1, "yesterday": -1}
_TEMPORAL_TYPES = frozenset({"DATE", "TIMESTAMP", "TIMESTAMPTZ", "TIME", "TIMETZ"})

#: A cheap first look: a text none of these words appear in reads no clock.
_MAY_READ = re.compile(r"current_|localtime|now|today|timestamp|tomorrow|yesterday", re.IGNORECASE)


def clock_literal(kind: str, today: dt.date) -> str:
    """The text a clock reader of type ``kind`` is replaced with.

    >>> clock_literal("TIMESTAMPTZ", dt.date(2026, 1, 2))
    "CAST('2026-01-02 00:00:00' AS TIMESTAMPTZ)"
    """
    if kind == "TEXT":  # PostgreSQL's timeofday(), in the session's time zone (UTC)
        return today.strftime("'%a %b %d 00:00:00.000000 %Y UTC'")
    if kind == "DATE":
        value = today.isoformat()
    elif kind.startswith("TIMESTAMP"):
        value = f"{today.isoformat()} 00:00:00"
    else:
        value = "00:00:00"
    return f"CAST('{value}' AS {kind})"


def pin_today_in_text(sql: str, dialect: str, today: dt.date) -> tuple[str, bool]:
    """``sql`` with every clock reader the engine of ``dialect`` accepts replaced by a
    literal of ``today`` (times are midnight), found among its tokens, so nothing inside
    a string, a quoted name or a comment is touched and the rest of the text is kept
    byte for byte; and whether anything was replaced.

    A spelling the engine does not accept is left as written, so the engine's own
    error stands (``current_date()`` and ``GETDATE()`` on PostgreSQL).  On PostgreSQL
    the special strings ``'now'``, ``'today'``, ``'tomorrow'`` and ``'yesterday'`` are
    pinned where they are cast to a date or time type (``'today'::date``,
    ``DATE 'today'``, ``CAST('now' AS timestamp)``).

    >>> day = dt.date(2026, 1, 2)
    >>> pin_today_in_text("SELECT now() - x -- now()", "postgres", day)
    ("SELECT CAST('2026-01-02 00:00:00' AS TIMESTAMPTZ) - x -- now()", True)
    >>> pin_today_in_text("SELECT current_date(), 'now'", "postgres", day)
    ("SELECT current_date(), 'now'", False)
    >>> pin_today_in_text("SELECT 'today'::date", "postgres", day)
    ("SELECT '2026-01-02'::date", True)
    """
    clocks = ENGINE_CLOCKS.get(dialect)
    if clocks is None or not _MAY_READ.search(sql):
        return sql, False
    import sqlglot
    from sqlglot.errors import TokenError

    try:
        tokens = sqlglot.Dialect.get_or_raise(dialect).tokenize(sql)
    except TokenError:
        return sql, False  # the engine's parser will say what is wrong with it
    spans = list(_clock_spans(tokens, clocks, dialect, today))
    if not spans:
        return sql, False
    parts, at = [], 0
    for start, end, text in spans:
        parts += [sql[at:start], text]
        at = end + 1
    parts.append(sql[at:])
    return "".join(parts), True


#: The schemas an engine's own clock functions may be named in (``pg_catalog.now()``).
_SYSTEM_SCHEMAS: dict[str, set[tuple[str, ...]]] = {
    "duckdb": {("MAIN",), ("SYSTEM", "MAIN")},
    "postgres": {("PG_CATALOG",)},
}


def _clock_spans(tokens, clocks: EngineClocks, dialect: str, today: dt.date):
    """(start, end, replacement) of each clock reader among ``tokens``, in order."""
    n = len(tokens)
    kinds = [t.token_type for t in tokens]
    words = [t.text.upper() for t in tokens]
    keyword_types = _keyword_types(dialect)

    def at(i: int) -> object:
        return kinds[i] if 0 <= i < n else None

    def word(i: int) -> str:
        return words[i] if 0 <= i < n else ""

    i = 0
    while i < n:
        token, name = tokens[i], words[i]
        called = at(i + 1) == _T.L_PAREN and at(i + 2) == _T.R_PAREN
        if called and name in clocks.functions and _a_name(token, kinds[i], dialect):
            first = _qualified_from(tokens, i, dialect)
            if first is not None:
                literal = clock_literal(clocks.functions[name], today)
                yield tokens[first].start, tokens[i + 2].end, literal
                i += 3
                continue
        elif (
            kinds[i] in keyword_types
            and name in clocks.keywords
            and at(i - 1) not in (_T.DOT, _T.ALIAS)
        ):
            end = token.end
            if at(i + 1) == _T.L_PAREN:
                precise = (
                    name in clocks.precision and at(i + 2) == _T.NUMBER and at(i + 3) == _T.R_PAREN
                )
                end = tokens[i + 3].end if precise else -1  # else refused by the engine
            if end >= 0:
                yield token.start, end, clock_literal(clocks.keywords[name], today)
        elif dialect == "postgres" and kinds[i] == _T.STRING:
            special = token.text.strip().lower()
            typed = (
                word(i - 1) in _TEMPORAL_TYPES
                or (at(i + 1) == _T.DCOLON and word(i + 2) in _TEMPORAL_TYPES)
                or (
                    at(i - 1) == _T.L_PAREN
                    and word(i - 2) == "CAST"
                    and at(i + 1) == _T.ALIAS
                    and word(i + 2) in _TEMPORAL_TYPES
                )
            )
            if special in _SPECIAL_DAYS and typed:
                day = today + dt.timedelta(days=_SPECIAL_DAYS[special])
                value = f"{day.isoformat()} 00:00:00" if special == "now" else day.isoformat()
                yield token.start, token.end, f"'{value}'"
        i += 1


def _a_name(token, kind, dialect: str) -> bool:
    """A token that can name a function: a word (``now``, ``CURRENT_DATE``), or a quoted
    name that resolves to the same function (``"now"``; PostgreSQL matches quoted names
    exactly, so only the lower-case spelling)."""
    if kind == _T.IDENTIFIER:
        return dialect != "postgres" or token.text == token.text.lower()
    return kind not in _NOT_NAMES


def _qualified_from(tokens, i: int, dialect: str) -> int | None:
    """Where the name of the function at ``i`` starts, its schema included
    (``pg_catalog.now``), or None when it is qualified by another schema (not the
    engine's own function)."""
    parts: list[str] = []
    first = i
    while first >= 2 and tokens[first - 1].token_type == _T.DOT:
        if tokens[first - 2].token_type not in (_T.VAR, _T.IDENTIFIER):
            return None
        parts.insert(0, tokens[first - 2].text.upper())
        first -= 2
    if parts and tuple(parts) not in _SYSTEM_SCHEMAS.get(dialect, set()):
        return None
    return first


@cache
def _keyword_types(dialect: str) -> frozenset:
    """The token types of the engine's bare clock keywords (and plain words)."""
    names = ENGINE_CLOCKS[dialect].keywords
    return frozenset(t for t in _T if t.name in names) | {_T.VAR}


from sqlglot.tokens import TokenType as _T  # noqa: E402 - after the tables it reads

#: Tokens that never name a function: strings of every kind, numbers, punctuation.
_NOT_NAMES = frozenset(
    {t for t in _T if t.name.endswith("STRING")}
    | {_T.NUMBER, _T.L_PAREN, _T.R_PAREN, _T.DOT, _T.COMMA, _T.DCOLON, _T.STAR}
)
