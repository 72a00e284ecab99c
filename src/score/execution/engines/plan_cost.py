"""A query's estimated cost, read from its engine's ``EXPLAIN (FORMAT JSON)`` plan.

What each engine offers (the deterministic alternative to timing a query, see
:mod:`score.scoring.efficiency`):

* **PostgreSQL** estimates a cost for every plan node in its own units (sequential page
  reads, 1.0 by default); the cost of a query is its root node's ``Total Cost``.
* **DuckDB** publishes no cost.  Its plan gives each operator's ``Estimated
  Cardinality`` (the rows its optimiser expects the operator to produce), and its join
  order optimiser scores a join order by the estimated cardinalities of the joins'
  results (the C_out cost model).  sqlgold's DuckDB cost is the sum of the estimates
  over every operator of the physical plan:
  the rows the plan is expected to handle, a proxy of work, not of time (it does not
  weigh a hash join against a scan of as many rows).
* **Spark** is not read: it has no per-query cost in its plans that sqlgold reads.

>>> duckdb_cost('[{"name": "PROJECTION", "extra_info": {"Estimated Cardinality": "10"},'
...             ' "children": [{"name": "SEQ_SCAN", "children": [],'
...             ' "extra_info": {"Estimated Cardinality": "1130"}}]}]')
1140.0
>>> postgres_cost([{"Plan": {"Node Type": "Seq Scan", "Total Cost": 31.3}}])
31.3
"""

from __future__ import annotations

import json
from typing import Any

CARDINALITY = "Estimated Cardinality"


def duckdb_cost(plan_json: str) -> float:
    """The sum of every operator's estimated cardinality in DuckDB's JSON plan (an
    operator without an estimate adds nothing); ValueError if the text is no plan."""
    try:
        plan = json.loads(plan_json)
    except (TypeError, ValueError, RecursionError) as e:
        raise ValueError(f"DuckDB's plan is not JSON: {e}") from None
    total = 0.0
    stack: list[Any] = [plan]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            info = node.get("extra_info")
            if isinstance(info, dict) and CARDINALITY in info:
                total += _number(info[CARDINALITY])
            stack.extend(node.get("children") or [])
    return total


def postgres_cost(plan: Any) -> float:
    """The root node's ``Total Cost`` of PostgreSQL's JSON plan (as psycopg decodes it, or
    its text); ValueError if it has none."""
    if isinstance(plan, str):
        try:
            plan = json.loads(plan)
        except ValueError as e:
            raise ValueError(f"PostgreSQL's plan is not JSON: {e}") from None
    try:
        return _number(plan[0]["Plan"]["Total Cost"])
    except (LookupError, TypeError):
        raise ValueError("PostgreSQL's plan has no Total Cost") from None


def _number(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"not a number in the plan: {value!r}") from None
    if not number >= 0:
        raise ValueError(f"not a cost: {value!r}")
    return number
