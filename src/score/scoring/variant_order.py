"""Whether a gold's order is total on a suite variant: the gold run with every output
column appended to its ORDER BY, ascending and then descending.

>>> print(tie_broken("SELECT a, n FROM t ORDER BY n DESC", 2, descending=True))
SELECT a, n FROM t ORDER BY n DESC, 1 DESC, 2 DESC
>>> tie_broken("SELECT a FROM t", 1, descending=False) is None  # no ORDER BY to extend
True
"""

from __future__ import annotations

import datetime as dt

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.execution.executor import Executor
from score.execution.result import QueryResult


def tie_broken(gold_sql: str, columns: int, *, descending: bool) -> str | None:
    """``gold_sql`` (DuckDB) with its outer ORDER BY extended by each of its ``columns``
    output columns by position; None if it has no outer ORDER BY or cannot be read."""
    try:
        tree = parse_one(gold_sql, read="duckdb")
    except SqlglotError:
        return None
    order = tree.args.get("order")
    if not isinstance(order, exp.Order) or columns < 1:
        return None
    extra = [
        exp.Ordered(this=exp.Literal.number(i), desc=descending, nulls_first=not descending)
        for i in range(1, columns + 1)
    ]
    order.set("expressions", [*order.expressions, *extra])
    return tree.sql(dialect="duckdb")


def order_is_open(gold_sql: str, columns: int, executor: Executor, today: dt.date | None) -> bool:
    """Whether rows the gold's ORDER BY ties on differ on the database ``executor``
    opens: its two tie-broken runs give different results (False when either cannot be
    built or run: the order is then judged as it is)."""
    results = []
    for descending in (False, True):
        sql = tie_broken(gold_sql, columns, descending=descending)
        if sql is None:
            return False
        found = executor.try_execute(sql, today=today)
        if not isinstance(found, QueryResult):
            return False
        results.append(found.rows())
    return results[0] != results[1]
