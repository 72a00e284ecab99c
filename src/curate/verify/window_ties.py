"""Rule ``window_order_ties``: no gold whose result depends on how ties fall in an ORDER BY.

``ROW_NUMBER() OVER (PARTITION BY a ORDER BY n DESC)`` numbers the rows of a partition in
the order of ``n``; rows with equal ``n`` get their numbers in whatever order the engine
meets them, which a second run, another engine or another thread count may change.  The
same holds for NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE, any aggregate over a
ROWS frame, and an aggregate that concatenates in an order (``STRING_AGG(x ORDER BY y)``,
``LIST``, ``ARRAY_AGG``).  RANK, DENSE_RANK, PERCENT_RANK, CUME_DIST and aggregates over
the default RANGE frame give tied rows the same value, so they never depend on ties
(``TOP n WITH TIES`` becomes such a RANK filter).

Running a gold twice does not show this (DuckDB usually meets rows in the same order), so
each such ranking is decided, for the rows it ranks, in three steps, the first that
settles it winning:

1. *proven total* (no query): the query block groups by keys that all appear among the
   ranking's PARTITION BY and ORDER BY keys, so no two of its rows share those keys;
2. *no tie that matters, on the data* (one query, :func:`tie_query`): over the same FROM /
   WHERE / GROUP BY / HAVING, no rows with equal PARTITION BY and ORDER BY keys differ in
   anything the block reads from them (every column, and every group-level aggregate, its
   projections and the ranking read).  Tied rows identical in all of those can swap
   places without changing any output row: the result is the same however ties fall;
3. *ties broken both ways* (two runs, :func:`with_tie_breaks`): where tied rows do
   differ, the gold is run with every such ranking's ORDER BY completed by those values,
   once ascending and once descending (the two extreme orders of every tie group); the
   gold is kept only if both give its own result.  A ranking whose ties the query above
   it never looks at (numbers compared only within a partition its keys already order
   totally, say) passes; a cut, a neighbour or a first value over ties fails.

Step 3 tries two of the possible orders, which shows every dependence a cut, a LAG /
LEAD or a FIRST / LAST value has on a tie group (each is decided by the group's first or
last rows); steps 1 and 2 are proofs.  The checks run on the database the gold is
verified on, as every reference rule does (a task is pinned to that data by its result
hash).  A ranking that cannot be checked (a named WINDOW, a check query that does not
run) is dropped too, saying so.

>>> import sqlglot
>>> tree = sqlglot.parse_one('''SELECT a, ROW_NUMBER() OVER (PARTITION BY a ORDER BY n DESC)
...     FROM (SELECT a, b, COUNT(*) AS n FROM t GROUP BY a, b) AS g''', read="duckdb")
>>> [(r.function, [k.sql() for k in r.keys]) for r in rankings(tree)]
[('ROW_NUMBER', ['a', 'n'])]
>>> print(tie_query(tree, rankings(tree)[0]).sql("duckdb"))  # doctest: +NORMALIZE_WHITESPACE
SELECT _p0, _o0 FROM (SELECT DISTINCT a AS _p0, n AS _o0, a AS _e0, n AS _e1
  FROM (SELECT a, b, COUNT(*) AS n FROM t GROUP BY a, b) AS g) AS _ties
  GROUP BY _p0, _o0 HAVING COUNT(*) > 1 ORDER BY _p0 NULLS FIRST, _o0 NULLS FIRST LIMIT 1
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

RULE = "window_order_ties"

#: Window functions whose value for a row depends on the order among tied rows.
_TIE_SENSITIVE = tuple(
    getattr(exp, name)
    for name in ("RowNumber", "Ntile", "Lag", "Lead", "FirstValue", "LastValue", "NthValue")
    if hasattr(exp, name)
)
_ORDERED_AGGREGATES = (exp.GroupConcat, exp.ArrayAgg, exp.List)
_CLEARED = ("order", "limit", "offset", "qualify", "distinct")


@dataclass(frozen=True)
class Ranking:
    """One ordering whose ties matter: the function, the block it ranks and its keys."""

    function: str
    select: exp.Select
    partition: tuple[exp.Expression, ...]
    order: tuple[exp.Expression, ...]
    node: exp.Expression  # the window or ordered aggregate
    named: bool = False  # OVER w: a named window, whose keys are not read here

    @property
    def keys(self) -> tuple[exp.Expression, ...]:
        return self.partition + self.order


def _name(node: exp.Expression) -> str:
    return node.sql_name() if isinstance(node, exp.Func) else type(node).__name__.upper()


def _order_keys(order: exp.Expression | None) -> tuple[exp.Expression, ...]:
    if order is None:
        return ()
    keys = [o.this if isinstance(o, exp.Ordered) else o for o in order.expressions]
    return tuple(k for k in keys if not isinstance(k, exp.Literal))


def _window_ranking(window: exp.Window, select: exp.Select) -> Ranking | None:
    function = window.this
    spec = window.args.get("spec")
    rows_frame = spec is not None and str(spec.args.get("kind") or "").upper() == "ROWS"
    if not (isinstance(function, _TIE_SENSITIVE) or rows_frame):
        return None
    partition = tuple(window.args.get("partition_by") or ())
    order = _order_keys(window.args.get("order"))
    named = window.args.get("alias") is not None and not partition and not order
    return Ranking(_name(function), select, partition, order, window, named)


def _aggregate_ranking(node: exp.Expression, select: exp.Select) -> Ranking | None:
    inner = node.this if not isinstance(node, exp.List) else seq_first(node.expressions)
    if not isinstance(inner, exp.Order) or isinstance(node.parent, exp.Window):
        return None
    group = select.args.get("group")
    partition = tuple(group.expressions) if group is not None else ()
    return Ranking(_name(node), select, partition, _order_keys(inner), node)


def seq_first(items: list[exp.Expression]) -> exp.Expression | None:
    return items[0] if items else None


def rankings(tree: exp.Expression) -> list[Ranking]:
    """Every ordering in ``tree`` whose result can depend on ties, in query order."""
    found: list[Ranking] = []
    for node in tree.walk():
        if (
            isinstance(node, exp.Window)
            and isinstance(node.parent, exp.Select)
            and (node.arg_key == "windows")
        ):
            continue  # a WINDOW clause definition, not a use
        if not isinstance(node, (exp.Window, *_ORDERED_AGGREGATES)):
            continue
        select = node.find_ancestor(exp.Select)
        if select is None:
            continue
        ranking = (
            _window_ranking(node, select)
            if isinstance(node, exp.Window)
            else _aggregate_ranking(node, select)
        )
        if ranking is not None:
            found.append(ranking)
    return found


def proven_total(ranking: Ranking) -> bool:
    """Whether the block's GROUP BY keys are all among the ranking's keys (no ties possible)."""
    if not ranking.order and not ranking.partition:
        return False
    group = ranking.select.args.get("group")
    if (
        group is None
        or not group.expressions
        or any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets", "totals"))
    ):
        return False
    keys = {_normal(k) for k in ranking.keys}
    return all(_normal(g) in keys for g in _group_keys(ranking.select))


def _group_keys(select: exp.Select) -> list[exp.Expression]:
    """GROUP BY keys, a position or an output alias replaced by its projection."""
    projections = select.expressions
    aliases = {p.alias.lower(): p.this for p in projections if isinstance(p, exp.Alias)}
    keys = []
    for key in select.args["group"].expressions:
        if isinstance(key, exp.Literal) and key.is_int and 0 < int(key.this) <= len(projections):
            key = projections[int(key.this) - 1].unalias()
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            key = aliases[key.name.lower()]
        keys.append(key)
    return keys


def _normal(node: exp.Expression) -> str:
    return node.sql("duckdb").lower()


def _atoms(node: exp.Expression, grouped: bool, out: dict[str, exp.Expression]) -> None:
    """What a projection reads from its block's rows: columns, or group-level aggregates."""
    if isinstance(node, exp.Window):
        for child in node.this.iter_expressions():
            _atoms(child, grouped, out)
        for key in (*(node.args.get("partition_by") or ()), *_order_keys(node.args.get("order"))):
            _atoms(key, grouped, out)
        return
    if isinstance(node, exp.AggFunc) and grouped:
        out.setdefault(_normal(node), node)
        return
    if isinstance(node, exp.Column | exp.Subquery | exp.Exists):
        out.setdefault(_normal(node), node)
        return
    if isinstance(node, exp.Star):
        out.setdefault("*", node)
        return
    for child in node.iter_expressions():
        _atoms(child, grouped, out)


def _visible_ctes(select: exp.Select) -> list[exp.CTE]:
    """The CTEs of every query enclosing ``select`` (outermost first), for a standalone copy."""
    ctes: list[exp.CTE] = []
    node: exp.Expression | None = select
    while node is not None:
        with_ = node.args.get("with_") if isinstance(node, exp.Query) else None
        if with_ is not None:
            ctes[:0] = list(with_.expressions)
        node = node.parent
    return ctes


def tie_query(tree: exp.Expression, ranking: Ranking) -> exp.Expression | None:
    """A query returning one tied key whose rows differ, or no row; None if none can be built."""
    if ranking.named:
        return None
    select = ranking.select
    grouped = select.args.get("group") is not None or any(
        isinstance(p.unalias(), exp.AggFunc) for p in select.expressions
    )
    atoms: dict[str, exp.Expression] = {}
    for projection in select.expressions:
        _atoms(projection.unalias(), grouped, atoms)
    _atoms(ranking.node, grouped, atoms)
    inner = select.copy()
    for arg in _CLEARED:
        inner.set(arg, None)
    inner.set("with_", None)
    keys = [exp.alias_(k.copy(), f"_p{i}") for i, k in enumerate(ranking.partition)]
    keys += [exp.alias_(k.copy(), f"_o{i}") for i, k in enumerate(ranking.order)]
    values = [
        a.copy() if isinstance(a, exp.Star) else exp.alias_(a.copy(), f"_e{i}")
        for i, a in enumerate(atoms.values())
    ]
    inner.set("expressions", keys + values)
    inner.set("distinct", exp.Distinct())
    names = [k.alias for k in keys]
    outer = exp.select(*(names or ["1"])).from_(exp.alias_(exp.Subquery(this=inner), "_ties"))
    if names:
        outer = outer.group_by(*names)
    outer = outer.having("COUNT(*) > 1")
    if names:  # the first tied key, not whichever the engine meets first: reports stay the same
        outer = outer.order_by(*(exp.Ordered(this=exp.column(n), nulls_first=True) for n in names))
    outer = outer.limit(1)
    ctes = _visible_ctes(select)
    if ctes:
        recursive = any(
            isinstance(n, exp.With) and n.args.get("recursive") for n in tree.find_all(exp.With)
        )
        outer.set("with_", exp.With(expressions=[c.copy() for c in ctes], recursive=recursive))
    return outer


def tie_breakers(ranking: Ranking) -> list[exp.Expression]:
    """What the ranking's block reads from its rows, to complete its ORDER BY with."""
    select = ranking.select
    grouped = select.args.get("group") is not None or any(
        isinstance(p.unalias(), exp.AggFunc) for p in select.expressions
    )
    atoms: dict[str, exp.Expression] = {}
    for projection in select.expressions:
        _atoms(projection.unalias(), grouped, atoms)
    _atoms(ranking.node, grouped, atoms)
    return [a for a in atoms.values() if not isinstance(a, exp.Star | exp.Subquery | exp.Exists)]


def with_tie_breaks(tree: exp.Expression, which: list[int], descending: bool) -> exp.Expression:
    """A copy of ``tree`` whose rankings number ``which`` (indexes into :func:`rankings`)
    have their ORDER BY completed by :func:`tie_breakers`, all ascending or descending."""
    copy = tree.copy()
    found = rankings(copy)
    for index in which:
        ranking = found[index]
        extra = [
            exp.Ordered(this=b.copy(), desc=descending, nulls_first=descending)
            for b in tie_breakers(ranking)
        ]
        node = ranking.node
        if isinstance(node, exp.Window):
            order = node.args.get("order")
            if order is None:
                node.set("order", exp.Order(expressions=extra))
            else:
                order.set("expressions", [*order.expressions, *extra])
        else:
            order = node.this if not isinstance(node, exp.List) else node.expressions[0]
            order.set("expressions", [*order.expressions, *extra])
    return copy


def describe(ranking: Ranking, tied: tuple | None, *, broken: bool = False) -> str:
    """The drop reason for a ranking whose ties change the result."""
    keys = ", ".join(k.sql("duckdb") for k in ranking.keys) or "no keys"
    where = f"{ranking.function} ordered by {keys}"
    if tied is None:
        return f"{where}: whether ties change its result could not be checked"
    shown = ", ".join(repr(v) for v in tied)
    if not broken:
        return f"{where}: rows tied on these keys ({shown}) differ in what the query reads"
    return (
        f"{where}: rows tied on these keys ({shown}) differ, and breaking the ties the other "
        "way changes the result (add a tie-breaker that makes the order total)"
    )
