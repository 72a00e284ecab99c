"""Products Spark cannot stop: three or more relations multiplied without a join key.

Spark cancels a query's tasks, but a task stops only where it checks for the cancel, and
a scan checks once per batch of rows (:data:`score.execution.engines.spark.SCAN_BATCH_ROWS`).
A nested-loop join runs every row of its batch against the whole other side, so a
product of two tables stops within a second of the cancel; in a product of three, each
scanned row meets the product of the other two (two million measurements times 1,130
persons), and the tasks of a cancelled query went on for as long as the server ran,
holding its cores: every query after it, golds and other predictions alike, waited out
its own time limit behind them (issue 57: ten attacks took 905 s).  Such a query can
only end in a timeout, so it is refused before it runs.

What counts, in each SELECT: its FROM and JOIN relations, grouped by the equalities
between their columns in ON and WHERE (``USING`` and ``NATURAL`` join a relation to
those before it); a group that holds a relation of more than one row is large.  A
SELECT of ``k`` large groups multiplies ``k - 1`` times; a query whose SELECTs multiply
twice or more (three large groups, or a product of a product) is refused.  A relation
known to hold one row (a derived table or CTE that aggregates without ``GROUP BY``,
or ends in ``LIMIT 1``) is small, and a SELECT with an equality on a column whose
relation cannot be told (an unqualified name among several) is not judged: what is
refused is only what certainly multiplies.

>>> import sqlglot
>>> unstoppable_product(sqlglot.parse_one(
...     "SELECT count(*) FROM cdm.measurement a, cdm.measurement b, cdm.person c", read="spark"))
'a product of 3 relations without a join key (a, b, c)'
>>> unstoppable_product(sqlglot.parse_one(
...     "SELECT count(*) FROM cdm.person p JOIN cdm.death d ON d.person_id = p.person_id "
...     "CROSS JOIN (SELECT count(*) AS n FROM cdm.person) t, cdm.location l", read="spark"))
"""

from __future__ import annotations

from sqlglot import exp

#: multiplications a query may hold (a product of two relations stops when cancelled)
MAX_PRODUCTS = 1


def unstoppable_product(tree: exp.Expr) -> str | None:
    """Why ``tree`` (Spark SQL) multiplies relations Spark cannot stop once they run, or
    None (see the module docstring)."""
    small = _one_row_ctes(tree)
    total, widest = 0, None
    for select in tree.find_all(exp.Select):
        groups = _large_groups(select, small)
        if groups is None or len(groups) < 2:
            continue
        total += len(groups) - 1
        if widest is None or len(groups) > len(widest):
            widest = groups
    if total <= MAX_PRODUCTS or widest is None:
        return None
    names = ", ".join(sorted(name for group in widest for name in group))
    if len(widest) > 2:
        return f"a product of {len(widest)} relations without a join key ({names})"
    return f"a product of products without a join key ({names})"


def _one_row_ctes(tree: exp.Expr) -> set[str]:
    return {
        cte.alias_or_name.lower()
        for cte in tree.find_all(exp.CTE)
        if isinstance(cte.this, exp.Select) and _one_row(cte.this)
    }


def _one_row(select: exp.Select) -> bool:
    """A SELECT that gives at most one row: an aggregate without GROUP BY, or LIMIT 1."""
    limit = select.args.get("limit")
    if isinstance(limit, exp.Limit) and isinstance(limit.expression, exp.Literal):
        if limit.expression.name in ("0", "1"):
            return True
    if select.args.get("group"):
        return False
    return any(
        isinstance(e, exp.AggFunc) or (isinstance(e, exp.Alias) and isinstance(e.this, exp.AggFunc))
        for e in select.expressions
    )


def _large_groups(select: exp.Select, small_ctes: set[str]) -> list[set[str]] | None:
    """The SELECT's relations in groups joined by equalities, those that hold one row
    left out; None when a relation of an equality cannot be told."""
    relations: list[tuple[str, bool]] = []  # (name, holds one row)
    from_ = select.args.get("from_")
    sources = ([from_.this] if isinstance(from_, exp.From) else []) + [
        j.this for j in select.args.get("joins") or []
    ]
    for source in sources:
        relations.append((source.alias_or_name.lower(), _small(source, small_ctes)))
    if len(relations) < 2:
        return None
    parent = {name: name for name, _ in relations}

    def find(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    def join(a: str, b: str) -> None:
        parent[find(a)] = find(b)

    for i, j in enumerate(select.args.get("joins") or [], start=1):
        if j.args.get("using") or str(j.args.get("method") or "").upper() == "NATURAL":
            for name, _ in relations[:i]:
                join(name, relations[i][0])
    conditions = [j.args.get("on") for j in select.args.get("joins") or []]
    where = select.args.get("where")
    conditions.append(where.this if isinstance(where, exp.Where) else None)
    for condition in conditions:
        if condition is None:
            continue
        for eq in condition.find_all(exp.EQ):
            sides = [eq.left, eq.right]
            if not all(isinstance(s, exp.Column) for s in sides):
                continue
            tables = [s.table.lower() for s in sides]
            if not all(tables):
                return None  # an unqualified column: its relation cannot be told
            if all(t in parent for t in tables) and tables[0] != tables[1]:
                join(*tables)
    groups: dict[str, set[str]] = {}
    for name, one_row in relations:
        if not one_row:
            groups.setdefault(find(name), set()).add(name)
    return list(groups.values())


def _small(source: exp.Expr, small_ctes: set[str]) -> bool:
    if isinstance(source, exp.Subquery) and isinstance(source.this, exp.Select):
        return _one_row(source.this)
    if isinstance(source, exp.Table) and not source.db:
        return source.name.lower() in small_ctes
    return False
