"""The reference rules a gold query must meet (seed 004), as pure checks.

A gold is kept only if it is one SELECT, returns between ``min_rows`` and ``max_rows``
rows (1 to 1,000 by default; an empty result would be matched by any empty query),
not every value is zero or NULL (else ``SELECT 0``-like answers could pass), it reads
no current date unless a fixed today is set, and its result is deterministic: two runs
agree, a LIMIT has an ORDER BY, an ORDER BY + LIMIT does not cut through ties, and no
ranking depends on how ties fall in its ORDER BY (:mod:`curate.verify.window_ties`).

Each rule can be switched off or tuned in :class:`ReferenceRules`; every failure is a
:class:`RuleFailure` naming its rule.

>>> import pyarrow as pa
>>> from score.execution.result import QueryResult
>>> check_result_rules(QueryResult.from_rows(["n"], [(0,), (None,)]), ReferenceRules())
RuleFailure(rule='not_all_zero_or_null', reason='every value of the result is zero or NULL')
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from score.execution.fixed_today import uses_current_time
from score.execution.result import QueryResult


@dataclass(frozen=True)
class ReferenceRules:
    """Which reference rules apply, with their limits."""

    min_rows: int = 1
    max_rows: int = 1000
    not_all_zero_or_null: bool = True
    allow_current_date: bool = False  # also allowed whenever a fixed today is set
    deterministic: bool = True  # a gold that could vary runs twice: the runs must agree
    limit_needs_order: bool = True
    no_ties_at_limit: bool = True
    window_order_ties: bool = True  # rankings (ROW_NUMBER, LAG, ...) must not depend on ties


@dataclass(frozen=True)
class RuleFailure:
    rule: str
    reason: str


def check_query_rules(
    tree: exp.Expression, rules: ReferenceRules, *, today_fixed: bool
) -> RuleFailure | None:
    """Rules decided by the query text alone."""
    if not rules.allow_current_date and not today_fixed and uses_current_time(tree):
        return RuleFailure(
            "no_current_date",
            "the query reads the current date; its answer changes daily (set a fixed today)",
        )
    if (
        rules.limit_needs_order
        and _limit(tree) is not None
        and not tree.args.get("order")
        and not one_row(tree)
    ):
        return RuleFailure("limit_needs_order", "LIMIT/TOP without ORDER BY picks arbitrary rows")
    return None


def check_result_rules(result: QueryResult, rules: ReferenceRules) -> RuleFailure | None:
    """Rules decided by the gold's result."""
    n = result.num_rows
    if n < rules.min_rows:
        return RuleFailure(
            "min_rows",
            "the result is empty (any query returning nothing would match it)"
            if n == 0
            else f"the result has {n} rows, fewer than {rules.min_rows}",
        )
    if n > rules.max_rows:
        return RuleFailure("max_rows", f"the result has {n} rows, more than {rules.max_rows}")
    if rules.not_all_zero_or_null and n and all(_zero_or_null(col) for col in result.table.columns):
        return RuleFailure("not_all_zero_or_null", "every value of the result is zero or NULL")
    return None


def _zero_or_null(column: pa.ChunkedArray) -> bool:
    """Whether every value is NULL or zero (NaN and infinity are not zero).

    Decided from the column's minimum and maximum, with no Arrow value made from a
    Python object: pyarrow imports pandas (0.3 s) the first time it converts one.
    """
    if column.null_count == len(column):
        return True
    t = column.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        bounds = pc.min_max(column)
        if bounds["min"].as_py() != 0 or bounds["max"].as_py() != 0:
            return False
        return not (pa.types.is_floating(t) and pc.any(pc.is_nan(column)).as_py())
    if pa.types.is_boolean(t):
        return not pc.any(column, skip_nulls=True).as_py()
    return False


def one_row(tree: exp.Expression) -> bool:
    """Whether the query returns at most one row whatever the data: a SELECT that
    aggregates with no GROUP BY (an aggregate inside a window or a subquery does not
    count).  A LIMIT on such a query picks nothing, so it needs no ORDER BY.

    >>> import sqlglot
    >>> one_row(sqlglot.parse_one("SELECT COUNT(*) AS n FROM person LIMIT 1"))
    True
    >>> one_row(sqlglot.parse_one("SELECT COUNT(*) OVER () AS n FROM person LIMIT 1"))
    False
    >>> one_row(sqlglot.parse_one("SELECT gender_concept_id, COUNT(*) FROM person GROUP BY 1"))
    False
    """
    if not isinstance(tree, exp.Select) or tree.args.get("group"):
        return False
    stack: list[exp.Expression] = list(tree.expressions)
    while stack:
        node = stack.pop()
        if isinstance(node, exp.AggFunc):
            return True
        if not isinstance(node, exp.Window | exp.Subquery | exp.Select):
            stack.extend(node.iter_expressions())
    return False


def _limit(tree: exp.Expression) -> exp.Expression | None:
    return tree.args.get("limit") or tree.args.get("fetch")


def _constant_limit(tree: exp.Expression) -> int | None | bool:
    """The n of a top-level constant LIMIT n (or FETCH), None without a limit, and False
    when the limit is not a constant number."""
    limit = _limit(tree)
    if limit is None:
        return None
    count = limit.expression if isinstance(limit, exp.Limit) else limit.args.get("count")
    if not isinstance(count, exp.Literal) or count.is_string:
        return False
    return int(count.this)


def _order_keys(tree: exp.Select) -> list[exp.Expression] | None:
    """The top-level ORDER BY keys as expressions of the SELECT's rows (aliases and
    ordinals resolved to the projections they name), or None if one cannot be."""
    projections = tree.expressions
    aliases = {p.alias_or_name.lower(): p for p in projections}  # names ignore case
    keys: list[exp.Expression] = []
    for ordered in tree.args["order"].expressions:
        key = ordered.this
        if isinstance(key, exp.Literal) and not key.is_string:  # ORDER BY 2
            index = int(key.this) - 1
            if not 0 <= index < len(projections):
                return None
            keys.append(projections[index].copy())
        elif isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
            keys.append(aliases[key.name.lower()].copy())
        else:
            keys.append(key.copy())
    return keys


def tie_probe(tree: exp.Expression) -> tuple[exp.Expression, int, int] | None:
    """A query that shows whether ``tree``'s ORDER BY + LIMIT n cuts through ties.

    Returns ``(probe, n, width)``: the probe returns up to n + 1 rows of the ORDER BY
    keys; the limit cuts a tie when rows n and n + 1 have equal keys.  None when the
    query has no top-level ORDER BY with a constant LIMIT.

    >>> import sqlglot
    >>> probe, n, width = tie_probe(sqlglot.parse_one(
    ...     "SELECT person_id, year_of_birth AS y FROM cdm.person ORDER BY y DESC LIMIT 3"))
    >>> probe.sql(), n, width
    ('SELECT year_of_birth AS y FROM cdm.person ORDER BY y DESC LIMIT 4', 3, 1)
    """
    n = _constant_limit(tree)
    if tree.args.get("order") is None or n is None or n is False:
        return None
    if not isinstance(tree, exp.Select):
        return None  # set operations: ORDER BY names output columns; compare whole rows
    keys = _order_keys(tree)
    if keys is None:
        return None
    probe = tree.copy()
    probe.set("limit", exp.Limit(expression=exp.Literal.number(n + 1)))
    probe.set("fetch", None)
    if tree.args.get("distinct"):
        # DISTINCT changes with the projection: keep it, and compare whole output rows
        return probe, n, len(tree.expressions)
    probe.set(
        "expressions",
        [
            k if isinstance(k, exp.Alias | exp.Column) else exp.alias_(k, f"_k{i}")
            for i, k in enumerate(keys)
        ],
    )
    return probe, n, len(keys)


@dataclass(frozen=True)
class LimitProbe:
    """The gold run once for its result and its order checks: its projections, then the
    ORDER BY keys (``extra`` more columns), and one row past its LIMIT n (``n`` None: no
    LIMIT, every row)."""

    query: exp.Expression
    n: int | None
    extra: int


def limit_probe(tree: exp.Expression) -> LimitProbe | None:
    """The gold with its ORDER BY keys appended and LIMIT n + 1, or None (no such limit).

    Its first n rows, without the appended keys, are the gold's result; rows n and n + 1
    show whether the limit cuts through ties (:func:`cuts_ties` on the keys).  With
    DISTINCT the output rows themselves are the keys (nothing is appended).

    >>> import sqlglot
    >>> p = limit_probe(sqlglot.parse_one(
    ...     "SELECT person_id, year_of_birth AS y FROM cdm.person ORDER BY y DESC LIMIT 3"))
    >>> print(p.query.sql(), p.n, p.extra)  # doctest: +NORMALIZE_WHITESPACE
    SELECT person_id, year_of_birth AS y, year_of_birth AS _tie_k0 FROM cdm.person
    ORDER BY y DESC LIMIT 4 3 1
    """
    probe = tie_probe(tree)
    if probe is None:
        return None
    keys_query, n, width = probe
    query = tree.copy()
    query.set("limit", exp.Limit(expression=exp.Literal.number(n + 1)))
    query.set("fetch", None)
    if tree.args.get("distinct"):
        return LimitProbe(query, n, 0)
    keys = [k.unalias() if isinstance(k, exp.Alias) else k for k in keys_query.expressions]
    return LimitProbe(_with_keys(query, keys), n, len(keys))


def _with_keys(query: exp.Select, keys: list[exp.Expression]) -> exp.Select:
    query.set(
        "expressions",
        [*query.expressions, *(exp.alias_(k.copy(), f"_tie_k{i}") for i, k in enumerate(keys))],
    )
    return query


def order_probe(tree: exp.Expression) -> LimitProbe | None:
    """The gold run once for its result and to show whether its order is total: its
    :func:`limit_probe` when it has ORDER BY ... LIMIT n, else (ORDER BY, no LIMIT) the
    gold with its ORDER BY keys appended; None for other queries, set operations and
    DISTINCT without a LIMIT (the keys cannot be appended).

    >>> import sqlglot
    >>> p = order_probe(sqlglot.parse_one(
    ...     "SELECT year_of_birth AS y, COUNT(*) AS n FROM cdm.person GROUP BY 1 ORDER BY 2"))
    >>> print(p.query.sql(), p.n, p.extra)  # doctest: +NORMALIZE_WHITESPACE
    SELECT year_of_birth AS y, COUNT(*) AS n, COUNT(*) AS _tie_k0 FROM cdm.person
    GROUP BY 1 ORDER BY 2 None 1
    """
    if _constant_limit(tree) is not None:
        return limit_probe(tree)
    if not isinstance(tree, exp.Select) or tree.args.get("order") is None:
        return None
    if tree.args.get("distinct"):
        return None
    keys = _order_keys(tree)
    if keys is None:
        return None
    keys = [k.unalias() if isinstance(k, exp.Alias) else k for k in keys]
    return LimitProbe(_with_keys(tree.copy(), keys), None, len(keys))


def probe_keys(result: QueryResult, probe: LimitProbe) -> QueryResult:
    """The ORDER BY key values of each row of a probe's result (every row it returned,
    the one past the LIMIT too): its appended columns, or whole rows when none was."""
    width = result.num_columns - probe.extra
    if not probe.extra:
        return result
    return QueryResult(
        result.columns[width:],
        result.types[width:],
        result.table.select(list(range(width, result.num_columns))),
    )


def split_probe(result: QueryResult, probe: LimitProbe) -> tuple[QueryResult, bool, bool]:
    """The gold's own result (its first n rows, its columns); whether the LIMIT cuts
    through ties; and whether its order is open: two rows of it that differ are tied
    on the ORDER BY keys (with DISTINCT and a LIMIT, whole rows are the keys: open)."""
    width = result.num_columns - probe.extra
    keys = probe_keys(result, probe)
    table = result.table.select(list(range(width)))
    if probe.n is not None:
        table = table.slice(0, probe.n)
    own = QueryResult(result.columns[:width], result.types[:width], table, result.seconds)
    cut = probe.n is not None and cuts_ties(keys, probe.n)
    return own, cut, not probe.extra or _order_open(own, keys)


def _order_open(own: QueryResult, keys: QueryResult) -> bool:
    """Whether two neighbouring rows of ``own`` differ but have equal ORDER BY keys."""
    return first_open_tie(own, keys) is not None


def first_open_tie(own: QueryResult, keys: QueryResult) -> int | None:
    """The first row (from 0) of ``own`` that differs from the row before it but has
    the same ORDER BY keys (``keys``, row for row), None if there is none.

    >>> r = QueryResult.from_rows(["who", "n"], [("a", 3), ("b", 2), ("c", 2)])
    >>> first_open_tie(r, QueryResult.from_rows(["n"], [(3,), (2,), (2,)]))
    2
    """
    rows, key_rows = own.rows(), keys.rows()
    for i in range(1, min(len(rows), len(key_rows))):
        if all(map(same_key, key_rows[i - 1], key_rows[i])) and rows[i - 1] != rows[i]:
            return i
    return None


#: Calls that draw a new random value at every run.
_DRAWS = frozenset({"random", "rand", "uuid", "gen_random_uuid", "newid"})
#: Calls whose value two runs may not share: the random draws and those keeping one
#: arbitrary value.
_ARBITRARY = _DRAWS | frozenset(
    {
        "any_value",
        "arbitrary",
        "first",
        "last",
        "arg_max",
        "arg_min",
        "argmax",
        "argmin",
        "max_by",
        "min_by",
        "setseed",
    }
)
_UNORDERED_LISTS = (exp.GroupConcat, exp.ArrayAgg, exp.List)


def _call_name(node: exp.Expression) -> str | None:
    """A function call's name in lower case (as written, for one sqlglot does not know)."""
    if isinstance(node, exp.Anonymous):
        return node.name.lower()
    return node.sql_name().lower() if isinstance(node, exp.Func) else None


def draws_at_random(tree: exp.Expression) -> str | None:
    """The first call in ``tree`` that draws a new random value at every run, or None.

    Such a gold varies by construction: a second run need not be made to show it (and
    could coincide by chance: two counts of ``random() < 0.5`` over 1,000 rows are equal
    about once in forty).

    >>> import sqlglot
    >>> draws_at_random(sqlglot.parse_one("SELECT count(*) FROM t WHERE random() < 0.5"))
    'RANDOM()'
    >>> draws_at_random(sqlglot.parse_one("SELECT count(*) FROM t"))
    """
    for node in tree.walk():
        if _call_name(node) in _DRAWS:
            return node.sql("duckdb")
    return None


def may_vary(tree: exp.Expression, *, order_matters: bool = True) -> str | None:
    """Why two runs of ``tree`` could differ, or None when its plan cannot.

    A SELECT computes a multiset of rows from its tables; only these pick or order rows
    arbitrarily: a LIMIT / OFFSET inside the query, a sample, random and UUID functions,
    aggregates that keep one arbitrary value (ANY_VALUE, FIRST, ARG_MAX, ...), lists and
    strings aggregated without an order, DISTINCT ON, and the order of rows tied on a
    top-level ORDER BY when the order is compared.  (The top-level ORDER BY ... LIMIT is
    checked by its own probe, rankings over ties by rule ``window_order_ties``.)

    >>> import sqlglot
    >>> may_vary(sqlglot.parse_one("SELECT year_of_birth, COUNT(*) FROM cdm.person GROUP BY 1"))
    >>> may_vary(sqlglot.parse_one("SELECT ANY_VALUE(person_id) FROM cdm.person"))
    'ANY_VALUE(person_id) keeps an arbitrary value'
    """
    if order_matters and tree.args.get("order") is not None:
        return "rows tied on the ORDER BY may come in another order"
    for node in tree.walk():
        if isinstance(node, exp.Limit | exp.Offset | exp.Fetch) and node.parent is not tree:
            return f"{node.sql('duckdb')} inside the query picks rows"
        if isinstance(node, exp.TableSample):
            return "a sample picks rows at random"
        if isinstance(node, exp.Distinct) and node.args.get("on") is not None:
            return "DISTINCT ON keeps one arbitrary row per key"
        if (
            isinstance(node, _UNORDERED_LISTS)
            and not isinstance(node.this if not isinstance(node, exp.List) else None, exp.Order)
            and not node.find(exp.Order)
        ):
            return f"{node.sql('duckdb')} aggregates in no order"
        if _call_name(node) in _ARBITRARY:
            return f"{node.sql('duckdb')} keeps an arbitrary value"
    return None


def cuts_ties(probe_result: QueryResult, n: int) -> bool:
    """Whether rows n and n + 1 of a :func:`tie_probe` result have equal keys."""
    rows = probe_result.rows()
    return len(rows) > n and all(map(same_key, rows[n - 1], rows[n]))


def same_key(a: object, b: object) -> bool:
    """Equal as ORDER BY keys: DuckDB sorts NaN as one value, so NaN ties with NaN.

    >>> same_key(float("nan"), float("nan")), same_key(1.0, 1), same_key(None, 0)
    (True, True, False)
    """
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b
