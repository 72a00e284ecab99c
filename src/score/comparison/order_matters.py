"""Does the gold SQL ask for an order?  A top-level ORDER BY in its syntax tree.

Spider's test-suite decides by a substring test (``'order by' in sql.lower()``), so a
window's ``OVER (ORDER BY ...)``, an ordered aggregate or an ORDER BY inside a subquery
or CTE all count there.  Here only the ORDER BY that orders the statement's own result
counts: on the outermost SELECT or set operation (UNION ...), also when the whole
statement is parenthesised.

>>> order_matters("SELECT person_id FROM person ORDER BY year_of_birth")
True
>>> order_matters("SELECT person_id, ROW_NUMBER() OVER (ORDER BY year_of_birth) FROM person")
False
>>> order_matters("WITH t AS (SELECT * FROM person ORDER BY 1 LIMIT 5) SELECT count(*) FROM t")
False
>>> order_matters("SELECT 1 AS a UNION ALL SELECT 2 ORDER BY a DESC")
True
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from score.execution.guard import statements_of


def order_matters(gold_sql: str, dialect: str = "duckdb") -> bool:
    """True when the statement's own result is ordered (ValueError if it does not parse
    as exactly one statement)."""
    try:
        statements = statements_of(sqlglot.parse(gold_sql, read=dialect))
    except SqlglotError as e:
        raise ValueError(f"cannot parse the gold SQL as {dialect}: {e}") from None
    if len(statements) != 1:
        raise ValueError(f"expected one SQL statement, found {len(statements)}")
    return ordered_result(statements[0])


def ordered_result(tree: exp.Expr) -> bool:
    """Whether the query's own result is ordered: an ORDER BY on it, or on the
    subquery or parenthesis that is all of it."""
    node = tree
    while True:
        if node.args.get("order") is not None:
            return True
        if isinstance(node, exp.Subquery | exp.Paren):
            node = node.this
            continue
        return False
