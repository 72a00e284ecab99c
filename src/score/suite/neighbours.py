"""Near misses of a gold: one edit each, made on sqlglot's tree.

A neighbour is what a model gets almost right: a comparison flipped or made strict, an
aggregate swapped, LIMIT off by one, a conjunct or a whole WHERE dropped, ASC for DESC, an
integer or a date off by one, AND for OR, IN for NOT IN, a join's side changed, a column
read from its neighbour of the same type in the same table, a LIKE pattern altered,
DISTINCT added or removed.  Each edit is made at one place of the tree; the neighbours of
a gold are its distinct texts, the gold's own text excluded, in the order of the tree.

>>> [n.edit for n in neighbours("SELECT COUNT(*) FROM cdm.person WHERE year_of_birth >= 1950")]
['drop_where', 'compare_flip', 'compare_strict', 'column_swap', 'int_plus_1', 'int_minus_1']
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.cdm.schema import CDM_COLUMN_TYPES
from score.suite import equivalence


@dataclass(frozen=True)
class Neighbour:
    """One near miss of a gold: the edit class that made it and its SQL; ``equivalent``
    names the rule under which it cannot change the result on a CDM that keeps its
    constraints (:mod:`score.suite.equivalence`), if one does."""

    edit: str
    sql: str
    equivalent: str | None = None


_FLIP: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.LT,
    exp.LT: exp.GT,
    exp.GTE: exp.LTE,
    exp.LTE: exp.GTE,
    exp.EQ: exp.NEQ,
    exp.NEQ: exp.EQ,
}
_STRICT: dict[type[exp.Expr], type[exp.Expr]] = {
    exp.GT: exp.GTE,
    exp.GTE: exp.GT,
    exp.LT: exp.LTE,
    exp.LTE: exp.LT,
}
_AGGREGATE: dict[type[exp.Expr], tuple[type[exp.Expr], ...]] = {
    exp.Min: (exp.Max, exp.Avg),
    exp.Max: (exp.Min, exp.Avg),
    exp.Avg: (exp.Sum, exp.Max),
    exp.Sum: (exp.Avg, exp.Max),
}
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _replace(node: exp.Expr, new: exp.Expr) -> None:
    node.replace(new)


def _flip(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    kind = type(node)
    if kind in _FLIP:
        yield (
            "compare_flip",
            lambda n: _replace(n, _FLIP[kind](this=n.this, expression=n.expression)),
        )
    if kind in _STRICT:
        yield (
            "compare_strict",
            lambda n: _replace(n, _STRICT[kind](this=n.this, expression=n.expression)),
        )


def _aggregate(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    for other in _AGGREGATE.get(type(node), ()):
        yield "aggregate_swap", lambda n, o=other: _replace(n, o(this=n.this))
    if isinstance(node, exp.Count) and not isinstance(node.this, exp.Star):
        if isinstance(node.this, exp.Distinct):
            inner = node.this.expressions
            if len(inner) == 1:
                yield "count_distinct", lambda n: _replace(n, exp.Count(this=n.this.expressions[0]))
        else:
            yield (
                "count_distinct",
                lambda n: _replace(n, exp.Count(this=exp.Distinct(expressions=[n.this]))),
            )


def _int_literal(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    """An integer compared with something, or a LIMIT, off by one."""
    if not (isinstance(node, exp.Literal) and node.is_int):
        return
    parent = node.parent
    if isinstance(parent, exp.Limit):
        value = int(node.name)
        yield "limit_plus_1", lambda n: _replace(n, exp.Literal.number(value + 1))
        if value > 1:
            yield "limit_minus_1", lambda n: _replace(n, exp.Literal.number(value - 1))
        return
    if not isinstance(parent, (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.EQ, exp.NEQ, exp.Between)):
        return
    value = int(node.name)
    if _looks_like_concept_id(node, value):
        return  # a concept id off by one is another concept: the column swap's job
    yield "int_plus_1", lambda n: _replace(n, exp.Literal.number(value + 1))
    yield "int_minus_1", lambda n: _replace(n, exp.Literal.number(value - 1))


def _looks_like_concept_id(node: exp.Expr, value: int) -> bool:
    other = node.parent.this if node.parent.this is not node else node.parent.args.get("expression")
    return (
        isinstance(other, exp.Column) and other.name.endswith("_concept_id")
    ) or value >= 1_000_000


def _date_literal(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    if not (isinstance(node, exp.Literal) and node.is_string and _DATE.match(node.name)):
        return
    try:
        day = dt.date.fromisoformat(node.name)
    except ValueError:
        return
    for edit, delta in (("date_plus_1", 1), ("date_minus_1", -1)):
        text = (day + dt.timedelta(days=delta)).isoformat()
        yield edit, lambda n, t=text: _replace(n, exp.Literal.string(t))


def _like(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    if not isinstance(node, (exp.Like, exp.ILike)):
        return
    pattern = node.expression
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        return
    for new in altered_patterns(pattern.name):
        yield "like_altered", lambda n, t=new: _replace(n.expression, exp.Literal.string(t))


def altered_patterns(text: str) -> list[str]:
    """The near misses of a LIKE pattern that ``like_altered`` makes: anchored at the
    start, anchored at the end, its core one character shorter.

    >>> altered_patterns("%biopsy%")
    ['biopsy%', '%biopsy', '%biops%']
    """
    altered = []
    if text.startswith("%") and len(text) > 1:
        altered.append(text[1:])  # anchored at the start
    if text.endswith("%") and len(text) > 1:
        altered.append(text[:-1])
    core = text.strip("%")
    if core:
        altered.append(text.replace(core, core[:-1], 1) if len(core) > 1 else text + "x")
    return [new for new in dict.fromkeys(altered) if new != text]


def _connective(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    if isinstance(node, exp.And):
        yield "and_or", lambda n: _replace(n, exp.Or(this=n.this, expression=n.expression))
        yield "drop_conjunct", lambda n: _replace(n, n.expression)
        yield "drop_conjunct", lambda n: _replace(n, n.this)
    elif isinstance(node, exp.Or):
        yield "and_or", lambda n: _replace(n, exp.And(this=n.this, expression=n.expression))


def _membership(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    if isinstance(node, exp.In) and not isinstance(node.parent, exp.Not):
        yield "in_not_in", lambda n: _replace(n, exp.Not(this=n.copy()))
    elif isinstance(node, exp.Not) and isinstance(node.this, exp.In):
        yield "in_not_in", lambda n: _replace(n, n.this)


def _order_counts(node: exp.Ordered, order_matters: bool) -> bool:
    """Whether the direction of this ORDER BY key can change a result: in a window, or
    where a LIMIT keeps the first rows, or in the outer query of a task whose order
    matters."""
    if node.find_ancestor(exp.Window) is not None:
        return True
    select = node.find_ancestor(exp.Select)
    if select is None:
        return order_matters
    if select.args.get("limit") is not None:
        return True
    return order_matters and select.parent is None


def _clauses(
    node: exp.Expr, order_matters: bool = False
) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
    if isinstance(node, exp.Ordered):
        if _order_counts(node, order_matters):
            yield "order_flip", lambda n: n.set("desc", not n.args.get("desc"))
    elif isinstance(node, exp.Where):
        yield "drop_where", lambda n: n.pop()
    elif isinstance(node, exp.Having):
        yield "drop_having", lambda n: n.pop()
    elif isinstance(node, exp.Join) and node.args.get("on") is not None:
        side = (node.side or "").upper()
        if side == "LEFT":
            yield "join_side", lambda n: (n.set("side", None), n.set("kind", None))
        elif not side and (node.kind or "").upper() in ("", "INNER"):
            yield "join_side", lambda n: (n.set("side", "LEFT"), n.set("kind", None))
    elif isinstance(node, exp.Select) and not isinstance(node.parent, (exp.In, exp.Exists)):
        if node.args.get("distinct"):
            yield "distinct", lambda n: n.set("distinct", None)
        elif not node.args.get("group") and not any(
            e.find(exp.AggFunc) for e in node.expressions
        ):  # one row of aggregates is distinct already: DISTINCT would change nothing
            yield "distinct", lambda n: n.set("distinct", exp.Distinct())


def _column_swap(
    tables: Mapping[str, str],
) -> Callable[[exp.Expr], Iterator[tuple[str, Callable[[exp.Expr], None]]]]:
    """A column read from another of the same type in the same table (the table known
    from its qualifier, or the only table of the query that has the column)."""

    def edits(node: exp.Expr) -> Iterator[tuple[str, Callable[[exp.Expr], None]]]:
        if not isinstance(node, exp.Column) or isinstance(node.this, exp.Star):
            return
        if isinstance(node.parent, (exp.EQ,)) and all(
            isinstance(side, exp.Column) for side in (node.parent.this, node.parent.expression)
        ):
            return  # a join key: the join's own edits cover it
        table = tables.get(node.table) if node.table else None
        if table is None and not node.table:
            owners = {t for t in tables.values() if node.name in CDM_COLUMN_TYPES.get(t, {})}
            table = owners.pop() if len(owners) == 1 else None
        columns = CDM_COLUMN_TYPES.get(table or "", {})
        kind = columns.get(node.name)
        if kind is None:
            return
        same = [c for c, k in columns.items() if k == kind and c != node.name]
        same = [c for c in same if c.endswith("_id") == node.name.endswith("_id")]
        for other in same[:1]:
            yield "column_swap", lambda n, c=other: n.set("this", exp.to_identifier(c))

    return edits


def _query_tables(tree: exp.Expr) -> dict[str, str]:
    """alias (or name) -> CDM table name, for every CDM table the query reads."""
    found: dict[str, str] = {}
    for table in tree.find_all(exp.Table):
        if table.name in CDM_COLUMN_TYPES:
            found[table.alias_or_name] = table.name
    return found


def neighbours(
    gold_sql: str, dialect: str = "duckdb", *, order_matters: bool = False
) -> list[Neighbour]:
    """The one-edit near misses of ``gold_sql`` (distinct texts, in tree order); [] if
    sqlglot cannot read it.  ``order_matters`` is the task's flag: without it, flipping
    the outer ORDER BY of a query with no LIMIT changes nothing a comparator sees."""
    try:
        tree = parse_one(gold_sql, read=dialect)
    except SqlglotError:
        return []
    gold_text = tree.sql(dialect=dialect)
    makers = (
        lambda node: _clauses(node, order_matters),
        _flip,
        _aggregate,
        _int_literal,
        _date_literal,
        _like,
        _connective,
        _membership,
        _column_swap(_query_tables(tree)),
    )
    seen = {gold_text}
    found = []
    nodes = list(tree.walk())
    for index, node in enumerate(nodes):
        for make in makers:
            for edit, apply in make(node):
                copy = tree.copy()
                target = list(copy.walk())[index]
                try:
                    apply(target)
                    text = copy.sql(dialect=dialect)
                except (SqlglotError, ValueError, AttributeError):
                    continue
                if text not in seen:
                    seen.add(text)
                    found.append(Neighbour(edit, text, equivalence.rule(edit, node, target)))
    return found
