"""Tier and features of a gold query, read from its sqlglot AST (pure: no database).

Tiers, first match wins:

* ``schema_aware``: reads an OMOP vocabulary table (``score.cdm.schema.VOCABULARY_TABLES``:
  concept, concept_ancestor, concept_relationship, ...);
* ``compositional``: has a join, a subquery, a CTE, a window function or a set operation;
* ``simple``: one table, filtered, grouped, aggregated or ordered.

A CTE is not a table: ``WITH concept AS (...) SELECT * FROM concept`` reads no vocabulary.

>>> classify_tier("SELECT COUNT(*) FROM cdm.person WHERE year_of_birth > 1950")
'simple'
>>> classify_tier("SELECT p.person_id FROM cdm.person p JOIN cdm.death d USING (person_id)")
'compositional'
>>> classify_tier("SELECT concept_name FROM cdm.concept WHERE concept_id = 8507")
'schema_aware'
>>> extract_features("SELECT gender_concept_id, COUNT(*) FROM cdm.person GROUP BY 1")["aggregates"]
['count']
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from curate.transpile.rules.tables import cte_names
from score.cdm.schema import VOCABULARY_TABLES
from score.errors import SqlgoldError
from score.execution.guard import statements_of

TIERS = ("simple", "compositional", "schema_aware")

# DuckDB's names for aggregates sqlglot names after another dialect.
_AGGREGATE_NAMES = {"group_concat": "string_agg"}


class TierError(SqlgoldError):
    """The gold SQL cannot be read, so it has no tier."""

    stage = "tiers"


def parse_gold(sql: str | exp.Expression, dialect: str = "duckdb") -> exp.Expression:
    """The AST of one gold query (an already parsed tree is returned as it is).

    >>> parse_gold("SELECT 1").sql()
    'SELECT 1'
    """
    if isinstance(sql, exp.Expression):
        return sql
    try:
        statements = statements_of(sqlglot.parse(sql, read=dialect))
    except SqlglotError as error:
        raise TierError(f"cannot parse the gold SQL: {error}") from error
    if len(statements) != 1:
        raise TierError(f"expected one statement, found {len(statements)}")
    return statements[0]


# --- detectors: each takes the tree and answers one question -------------------------


def _is_table_read(table: exp.Table) -> bool:
    """A table of the database, not a CTE, a function or VALUES."""
    if not isinstance(table.this, exp.Identifier):
        return False
    return bool(table.args.get("db")) or table.name.lower() not in cte_names(table)


def tables(tree: exp.Expression) -> list[str]:
    """The tables read (lower case, without schema), sorted; CTE names excluded.

    >>> tables(parse_gold("WITH x AS (SELECT * FROM cdm.person) SELECT * FROM x, cdm.death"))
    ['death', 'person']
    """
    return sorted({t.name.lower() for t in tree.find_all(exp.Table) if _is_table_read(t)})


def reads_vocabulary(tree: exp.Expression) -> bool:
    """Whether a vocabulary table is read.

    >>> reads_vocabulary(parse_gold("SELECT * FROM cdm.concept_ancestor"))
    True
    """
    return any(name in VOCABULARY_TABLES for name in tables(tree))


def join_count(tree: exp.Expression) -> int:
    """JOIN clauses, comma joins included.

    >>> join_count(parse_gold("SELECT * FROM a JOIN b ON a.x = b.x, c"))
    2
    """
    return sum(1 for _ in tree.find_all(exp.Join))


def _container(query: exp.Expression) -> exp.Expression | None:
    """The node holding ``query``, looking through parentheses."""
    parent = query.parent
    while isinstance(parent, exp.Subquery):
        parent = parent.parent
    return parent


def _scopes(tree: exp.Expression) -> list[exp.Expression]:
    """Queries that open a scope: the root, subqueries and CTE bodies (not set-op operands)."""
    found = []
    for node in tree.find_all(exp.Select, exp.SetOperation):
        if not isinstance(_container(node), exp.SetOperation):
            found.append(node)
    return found


def _is_subquery(query: exp.Expression) -> bool:
    container = _container(query)
    return container is not None and not isinstance(container, exp.CTE)


def subquery_count(tree: exp.Expression) -> int:
    """Queries inside another query (FROM, WHERE, IN, EXISTS, scalar), CTE bodies excluded.

    >>> subquery_count(parse_gold("SELECT * FROM (SELECT 1) t WHERE 1 IN (SELECT 1)"))
    2
    """
    return sum(1 for q in _scopes(tree) if _is_subquery(q))


def cte_count(tree: exp.Expression) -> int:
    """Common table expressions (WITH ... AS).

    >>> cte_count(parse_gold("WITH a AS (SELECT 1), b AS (SELECT 2) SELECT * FROM a, b"))
    2
    """
    return sum(1 for _ in tree.find_all(exp.CTE))


def window_count(tree: exp.Expression) -> int:
    """Window function calls (``... OVER (...)``).

    >>> window_count(parse_gold("SELECT RANK() OVER (ORDER BY x), SUM(x) OVER () FROM t"))
    2
    """
    return sum(1 for w in tree.find_all(exp.Window) if w.arg_key != "windows")


def set_operations(tree: exp.Expression) -> list[str]:
    """Set operations in reading order: ``union``, ``union all``, ``intersect``, ``except``.

    >>> set_operations(parse_gold("SELECT 1 UNION ALL SELECT 2 EXCEPT SELECT 3"))
    ['union all', 'except']
    """
    names = []
    for node in _in_reading_order(tree):
        if isinstance(node, exp.SetOperation):
            name = node.key.lower()
            names.append(name if node.args.get("distinct", True) else f"{name} all")
    return names


def _in_reading_order(node: exp.Expression):
    """The nodes of ``node`` with a set operation between its two operands."""
    if isinstance(node, exp.SetOperation):
        yield from _in_reading_order(node.this)
        yield node
        for key, child in node.args.items():
            if key != "this" and isinstance(child, exp.Expression):
                yield from _in_reading_order(child)
        return
    yield node
    for child in node.iter_expressions():
        yield from _in_reading_order(child)


def aggregates(tree: exp.Expression) -> list[str]:
    """Aggregate function names (lower case), sorted, without repeats; window calls excluded.

    >>> aggregates(parse_gold("SELECT COUNT(*), AVG(x), SUM(x) OVER () FROM t GROUP BY y"))
    ['avg', 'count']
    """
    names = {
        node.sql_name().lower()
        for node in tree.find_all(exp.AggFunc)
        if not isinstance(node.parent, exp.Window)
    }
    return sorted(_AGGREGATE_NAMES.get(name, name) for name in names)


def nesting_depth(tree: exp.Expression) -> int:
    """How deep queries nest: 0 for a flat query, +1 per subquery or CTE level.

    >>> nesting_depth(parse_gold("SELECT * FROM (SELECT * FROM (SELECT 1) a) b"))
    2
    """
    scopes = _scopes(tree)
    ids = {id(q) for q in scopes}
    deepest = 0
    for query in scopes:
        depth, node = 0, query.parent
        while node is not None:
            depth += id(node) in ids
            node = node.parent
        deepest = max(deepest, depth)
    return deepest


def has_order_by(tree: exp.Expression) -> bool:
    """An ORDER BY of a query (not of a window), anywhere.

    >>> has_order_by(parse_gold("SELECT RANK() OVER (ORDER BY x) FROM t"))
    False
    """
    return any(isinstance(o.parent, exp.Query) for o in tree.find_all(exp.Order))


def has_limit(tree: exp.Expression) -> bool:
    """A LIMIT or FETCH anywhere.

    >>> has_limit(parse_gold("SELECT * FROM t LIMIT 5"))
    True
    """
    return tree.find(exp.Limit, exp.Fetch) is not None


def has_distinct(tree: exp.Expression) -> bool:
    """SELECT DISTINCT or an aggregate over DISTINCT values, anywhere.

    >>> has_distinct(parse_gold("SELECT COUNT(DISTINCT person_id) FROM t"))
    True
    """
    return tree.find(exp.Distinct) is not None


def has_group_by(tree: exp.Expression) -> bool:
    """A GROUP BY anywhere.

    >>> has_group_by(parse_gold("SELECT x FROM t GROUP BY x"))
    True
    """
    return tree.find(exp.Group) is not None


def is_compositional(tree: exp.Expression) -> bool:
    """A join, subquery, CTE, window function or set operation.

    >>> is_compositional(parse_gold("SELECT x FROM t UNION SELECT x FROM u"))
    True
    """
    return bool(
        join_count(tree)
        or subquery_count(tree)
        or cte_count(tree)
        or window_count(tree)
        or set_operations(tree)
    )


# --- public ---------------------------------------------------------------------------


def classify_tier(sql: str | exp.Expression, dialect: str = "duckdb") -> str:
    """``schema_aware``, ``compositional`` or ``simple`` (see the module docstring)."""
    tree = parse_gold(sql, dialect)
    if reads_vocabulary(tree):
        return "schema_aware"
    if is_compositional(tree):
        return "compositional"
    return "simple"


def extract_features(sql: str | exp.Expression, dialect: str = "duckdb") -> dict:
    """The gold query's features as a JSON-friendly dict.

    >>> features = extract_features("SELECT DISTINCT p.year_of_birth FROM cdm.person p "
    ...                             "JOIN cdm.death d ON d.person_id = p.person_id LIMIT 3")
    >>> features["tables"], features["join_count"], features["has_distinct"]
    (['death', 'person'], 1, True)
    """
    tree = parse_gold(sql, dialect)
    return {
        "tables": tables(tree),
        "join_count": join_count(tree),
        "aggregates": aggregates(tree),
        "window_functions": window_count(tree),
        "set_operations": set_operations(tree),
        "subqueries": subquery_count(tree),
        "ctes": cte_count(tree),
        "nesting_depth": nesting_depth(tree),
        "has_order_by": has_order_by(tree),
        "has_limit": has_limit(tree),
        "has_distinct": has_distinct(tree),
        "has_group_by": has_group_by(tree),
    }
