"""Every reference rule on numbers of every type DuckDB returns, run on the real database."""

from __future__ import annotations

import pytest

from curate.verify.gold import Drop, run_gold
from curate.verify.reference_rules import ReferenceRules
from score.execution.result import QueryResult

# (type, a non-zero value that fits it)
NUMBER_TYPES = [
    ("DECIMAL(18, 0)", "7"),
    ("DECIMAL(4, 2)", "0.25"),
    ("DECIMAL(9, 3)", "1.5"),
    ("DECIMAL(38, 10)", "1.5"),
    ("DECIMAL(38, 38)", "0.25"),
    ("NUMERIC", "1.5"),
    ("HUGEINT", "7"),
    ("UHUGEINT", "7"),
    ("TINYINT", "7"),
    ("UTINYINT", "7"),
    ("USMALLINT", "7"),
    ("UINTEGER", "7"),
    ("UBIGINT", "7"),
    ("BIGINT", "7"),
    ("FLOAT", "1.5"),
    ("DOUBLE", "1.5"),
    ("DOUBLE", "'nan'"),
    ("DOUBLE", "'inf'"),
    ("DOUBLE", "'-inf'"),
]


def gold(sql: str, executor):
    run = run_gold(sql, executor, ReferenceRules(), order_matters=False, profile="sqlgold")
    return run if isinstance(run, Drop) else run.result


@pytest.mark.parametrize(("dtype", "value"), NUMBER_TYPES)
def test_every_rule_reads_every_number_type(executor, dtype, value):
    zero = gold(f"SELECT CAST(0 AS {dtype}) AS v, CAST(NULL AS {dtype}) AS w", executor)
    assert zero == Drop(
        "verify", "not_all_zero_or_null", "every value of the result is zero or NULL"
    )
    kept = gold(f"SELECT CAST({value} AS {dtype}) AS v, CAST(0 AS {dtype}) AS w", executor)
    assert isinstance(kept, QueryResult) and kept.num_rows == 1
    values = f"(CAST({value} AS {dtype})), (CAST({value} AS {dtype})), (CAST(0 AS {dtype}))"
    order = "ASC" if value.startswith("'-") else "DESC"  # the two equal values first
    tied = gold(f"SELECT v FROM (VALUES {values}) AS t(v) ORDER BY v {order} LIMIT 1", executor)
    assert isinstance(tied, Drop) and tied.rule == "no_ties_at_limit"
    cut = gold(f"SELECT v FROM (VALUES {values}) AS t(v) ORDER BY v {order} LIMIT 2", executor)
    assert isinstance(cut, QueryResult) and cut.num_rows == 2


def test_a_nan_beside_zeros_is_not_all_zero(executor):
    """The rule reads a column's minimum and maximum, which skip NaN: NaN is looked for."""
    mixed = gold(
        "SELECT v FROM (VALUES (CAST(0 AS DOUBLE)), (CAST('nan' AS DOUBLE))) t(v)", executor
    )
    assert isinstance(mixed, QueryResult) and mixed.num_rows == 2
