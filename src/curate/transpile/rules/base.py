"""What every transpile rule shares: the Rule record, the error, the tree walk, type tests.

A rule is a small function ``node -> node``.  :func:`apply_rule` offers it every node of
a tree, children before parents; a rule returns the node unchanged when it does not
apply, or a new node to put in its place (which may wrap the old node or reuse its
children).  Rules read the SQL Server types that
``curate.transpile.rules.annotate`` left on the nodes (``node.type``) and set the type of any
node they build, so later rules can read it too.

>>> from sqlglot import exp, parse_one
>>> def shout(node):
...     return exp.Literal.string("HI") if isinstance(node, exp.Literal) else node
>>> tree, fired = apply_rule(shout, parse_one("SELECT 'hi', 1"))
>>> tree.sql(), fired
("SELECT 'HI', 'HI'", True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain

from sqlglot import exp

from score.errors import SqlgoldError

NodeRule = Callable[[exp.Expression], exp.Expression]

TSQL = frozenset({"tsql"})
TSQL_POSTGRES = frozenset({"tsql", "postgres"})
ORACLE = frozenset({"oracle"})
ALL_READS = frozenset({"tsql", "postgres", "oracle", "duckdb"})


class TranspileError(SqlgoldError):
    """The gold SQL cannot be parsed, or cannot be carried into DuckDB faithfully.

    ``rule`` names what refused it (a rule of RULES, ``parse``, or a ``reject:`` check).

    >>> str(TranspileError("TOP n PERCENT", rule="reject:top_percent"))
    '[transpile] TOP n PERCENT'
    """

    stage = "transpile"

    def __init__(self, message: str, *, rule: str | None = None, **where) -> None:
        super().__init__(message, **where)
        self.rule = rule


def acts_on(*kinds: type[exp.Expression]) -> Callable[[NodeRule], NodeRule]:
    """Declare the node classes a rule can change: every other node it returns unchanged.

    :func:`apply_rule` then offers the rule only nodes of those classes (or subclasses),
    which gives the same tree without a call per node of a large query.

    >>> @acts_on(exp.Literal)
    ... def shout(node):
    ...     return exp.Literal.string("HI") if isinstance(node, exp.Literal) else node
    >>> shout.kinds
    (<class 'sqlglot.expressions.core.Literal'>,)
    """

    def declare(fn: NodeRule) -> NodeRule:
        fn.kinds = kinds  # type: ignore[attr-defined]
        return fn

    return declare


def unchanged(node: exp.Expression) -> exp.Expression:
    """The tree rule of a parse-time rule, which has done its work while parsing."""
    return node


@dataclass(frozen=True)
class Rule:
    """One named fix-up: ``fn`` is applied to every node when reading one of ``dialects``.

    ``phase`` is ``parse`` (applied by the reading dialect), ``names`` (on the parsed
    tree) or ``types`` (after type annotation).
    """

    name: str
    description: str
    fn: NodeRule = unchanged
    dialects: frozenset[str] = TSQL
    phase: str = "types"


def children_first(tree: exp.Expression) -> list[exp.Expression]:
    """Every node of ``tree``, children before their parents."""
    return list(reversed(list(tree.dfs())))


class Nodes:
    """The nodes of a tree, children first, found by class: what each rule is offered.

    Thirty-odd rules run over one tree; each takes only the nodes of its classes, found
    through the classes present in the tree instead of a test of every node.

    >>> from sqlglot import parse_one
    >>> [n.sql() for n in Nodes(parse_one("SELECT 1 + x FROM t WHERE y = 'a'")).of((exp.Literal,))]
    ["'a'", '1']
    """

    def __init__(self, tree: exp.Expression) -> None:
        self.all = children_first(tree)
        self._by_class: dict[type, list[int]] = {}
        for position, node in enumerate(self.all):
            self._by_class.setdefault(type(node), []).append(position)

    def of(self, kinds: tuple[type, ...] | None) -> list[exp.Expression]:
        """The nodes of ``kinds`` (or of their subclasses), children first; all if None."""
        if kinds is None:
            return self.all
        found = [at for cls, at in self._by_class.items() if issubclass(cls, kinds)]
        positions = found[0] if len(found) == 1 else sorted(chain.from_iterable(found))
        return [self.all[i] for i in positions]


def apply_rule(
    rule: NodeRule, tree: exp.Expression, nodes: Nodes | None = None
) -> tuple[exp.Expression, bool]:
    """Offer ``rule`` every node of ``tree``, children first; the new tree and whether it fired.

    The tree is changed in place (like sqlglot's optimizer rules); the root may be replaced.
    ``nodes`` is :class:`Nodes` of ``tree`` if the caller has it (a rule that did not fire
    leaves it valid for the next one).  A rule declared with :func:`acts_on` is offered
    only the nodes of its classes.
    """
    fired = False
    offered = (nodes if nodes is not None else Nodes(tree)).of(getattr(rule, "kinds", None))
    for node in offered:
        parent, key, index = node.parent, node.arg_key, node.index
        new = rule(node)
        if new is node:
            continue
        fired = True
        if node is tree or parent is None:
            tree = new
        else:
            parent.set(key, new, index)
    return tree, fired


def typed(node: exp.Expression, dtype: str | exp.DataType) -> exp.Expression:
    """Set ``node``'s type (a rule's new nodes carry one) and return it.

    >>> typed(exp.Literal.number(1), "BIGINT").type.sql()
    'BIGINT'
    """
    node.type = dtype if isinstance(dtype, exp.DataType) else exp.DataType.build(dtype)
    return node


def _dtype(node: exp.Expression | None) -> exp.DType | None:
    if node is None:
        return None
    t = node.type
    return t.this if t is not None else None


def is_integer(node: exp.Expression | None) -> bool:
    """Whether ``node`` was annotated with an integer type (BIT included, as in SQL Server).

    >>> is_integer(typed(exp.Literal.number(1), "INT"))
    True
    """
    return _dtype(node) in exp.DataType.INTEGER_TYPES


def is_fractional(node: exp.Expression | None) -> bool:
    """Whether ``node`` has a non-integer numeric type (FLOAT, REAL, DECIMAL, MONEY, ...)."""
    return _dtype(node) in exp.DataType.REAL_TYPES


def is_string(node: exp.Expression | None) -> bool:
    """Whether ``node`` has a character type (a string literal has one even unannotated)."""
    if isinstance(node, exp.Literal) and node.is_string:
        return True
    return _dtype(node) in exp.DataType.TEXT_TYPES


def is_date(node: exp.Expression | None) -> bool:
    """Whether ``node`` has type DATE (no time of day)."""
    return _dtype(node) in (exp.DType.DATE, exp.DType.DATE32)


def is_datetime(node: exp.Expression | None) -> bool:
    """Whether ``node`` has a date-and-time type (DATETIME, DATETIME2, TIMESTAMP, ...)."""
    return _dtype(node) in exp.DataType.TEMPORAL_TYPES and not is_date(node) and not _is_time(node)


def is_temporal(node: exp.Expression | None) -> bool:
    """Whether ``node`` has a date or date-and-time type."""
    return is_date(node) or is_datetime(node)


def _is_time(node: exp.Expression | None) -> bool:
    return _dtype(node) in (exp.DType.TIME, exp.DType.TIMETZ)


def is_unknown(node: exp.Expression | None) -> bool:
    """Whether annotation could not tell ``node``'s type."""
    return _dtype(node) in (None, exp.DType.UNKNOWN)


def int_literal(node: exp.Expression | None) -> int | None:
    """The value of an integer literal (sign included), else None.

    >>> int_literal(exp.Neg(this=exp.Literal.number(3)))
    -3
    """
    if isinstance(node, exp.Paren):
        return int_literal(node.this)
    if isinstance(node, exp.Neg):
        inner = int_literal(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and node.is_int:
        return int(node.this)
    return None


def truncated_integer(value: exp.Expression, to: str | exp.DataType = "BIGINT") -> exp.Cast:
    """CAST(TRUNC(value) AS to): toward zero, as SQL Server converts to an integer.

    >>> truncated_integer(exp.Literal.number(2.7)).sql("duckdb")
    'CAST(TRUNC(2.7) AS BIGINT)'
    """
    target = to if isinstance(to, exp.DataType) else exp.DataType.build(to)
    return typed(exp.Cast(this=exp.Trunc(this=value), to=target), target)
