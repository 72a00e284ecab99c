"""SQL as a page shows it: formatted by sqlglot (pretty), or as written when it does not parse.

>>> print(pretty_sql("select a, count(*) from t where b = 1 group by a", "duckdb"))
SELECT
  a,
  COUNT(*)
FROM t
WHERE
  b = 1
GROUP BY
  a
>>> pretty_sql("not sql at all (", "duckdb")
'not sql at all ('
"""

from __future__ import annotations

from functools import lru_cache

import sqlglot
from sqlglot.errors import SqlglotError

from score.execution.guard import statements_of
from score.sqlglot_quiet import quiet

#: longer SQL is shown as written (formatting it would cost more than it helps)
MAX_FORMATTED = 20_000


@lru_cache(maxsize=8192)
def pretty_sql(sql: str, dialect: str | None = None) -> str:
    """``sql`` formatted one clause a line; unchanged when it does not parse."""
    if len(sql) > MAX_FORMATTED:
        return sql
    try:
        with quiet():  # sqlglot's warnings are not the reader's business here
            statements = sqlglot.parse(sql, read=dialect or None)
            parts = [s.sql(dialect=dialect or None, pretty=True) for s in statements_of(statements)]
    except (SqlglotError, RecursionError, ValueError, KeyError, TypeError):
        return sql
    return ";\n\n".join(parts) if parts else sql
