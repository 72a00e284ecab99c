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
