"""TOP n WITH TIES: DuckDB has no LIMIT ... WITH TIES; keep rows ranked n or better.

>>> from sqlglot import parse_one
>>> sql = "SELECT TOP 2 WITH TIES a FROM t ORDER BY a DESC"
>>> top_with_ties(parse_one(sql, read="tsql")).sql("duckdb")
'SELECT a FROM t QUALIFY RANK() OVER (ORDER BY a DESC) <= 2 ORDER BY a DESC'
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import TranspileError, acts_on, int_literal


def _with_ties(select: exp.Select) -> bool:
    limit = select.args.get("limit")
    options = limit.args.get("limit_options") if isinstance(limit, exp.Limit) else None
    return bool(options and options.args.get("with_ties"))


def _rank_key(ordered: exp.Ordered, select: exp.Select) -> exp.Ordered:
    """An ORDER BY key usable inside OVER (): an ordinal becomes its select expression."""
    key = ordered.copy()
    position = int_literal(ordered.this)
    if position is not None:
        projections = select.expressions
        if not 1 <= position <= len(projections):
            raise TranspileError(f"ORDER BY {position}: no such column")
        key.set("this", projections[position - 1].unalias().copy())
    return key


@acts_on(exp.Select)
def top_with_ties(node: exp.Expression) -> exp.Expression:
    """``TOP n WITH TIES ... ORDER BY k`` as ``QUALIFY RANK() OVER (ORDER BY k) <= n``.

    An ORDER BY ordinal is replaced by its select expression inside OVER ().

    >>> from sqlglot import parse_one
    >>> sql = "SELECT TOP 1 WITH TIES a, COUNT(*) FROM t GROUP BY a ORDER BY 2 DESC"
    >>> top_with_ties(parse_one(sql, read="tsql")).args["qualify"].sql("duckdb")
    'QUALIFY RANK() OVER (ORDER BY COUNT(*) DESC) <= 1'
    """
    if not isinstance(node, exp.Select) or not _with_ties(node):
        return node
    order = node.args.get("order")
    if order is None:
        raise TranspileError("TOP ... WITH TIES needs an ORDER BY")
    if node.args.get("distinct"):
        raise TranspileError("TOP ... WITH TIES with DISTINCT: ties are ranked before DISTINCT")
    new = node.copy()
    count = new.args["limit"].expression
    keys = [_rank_key(o, new) for o in new.args["order"].expressions]
    rank = exp.Window(this=exp.Rank(), order=exp.Order(expressions=keys))
    new.set("limit", None)
    new.set("qualify", exp.Qualify(this=exp.LTE(this=rank, expression=count)))
    return new
