"""Synthetic-SNUH's comparison (seed 004, "Result comparison"): the Spider test-suite
rules with EHRSQL 2024's rounding, as BenchToward reimplemented them.

* rows are a multiset, compared in order only when the question asks for one;
* the prediction's columns may be permuted, but the column count must match;
* numbers are rounded to 3 decimals first, exactly like Python's
  ``round(float(x), 3)`` (so 2.0004 = 2.0 but 2.0004 != 2.0006), then compared exactly;
* every row is compared (not EHRSQL's first 100 sorted rows);
* NULL is its own value (not EHRSQL's string 'None');
* values otherwise keep Python's semantics, as in test-suite: TRUE = 1, '1' != 1, a
  DATE != its ISO string and != the midnight TIMESTAMP; NaN = NaN (a rounded NaN is
  still the same value: our reading, the seed does not say).

Unlike test-suite there is no quick_rej quirk (1.0 beside 1.5 equals 1 beside 1.5)
and no crash on LIST cells (they compare by structure).

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["x"], [(2.0004,)])
>>> compare_snuh(g, QueryResult.from_rows(["y"], [(2.0,)]), Flags()).match
True
"""

from __future__ import annotations

from score.comparison.profiles.base import Flags, Verdict
from score.comparison.profiles.bijective import compare_bijective
from score.comparison.profiles.column_checks import Engine
from score.comparison.values import Rules
from score.execution.result import QueryResult

RULES = Rules(
    bool_is_number=True,
    date_is_timestamp=False,
    aware_is_naive=False,
    nan_equals_nan=True,
    round_digits=3,
)


def compare_snuh(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """Synthetic-SNUH's verdict (``condition_cols`` ignored: SNUH has none)."""
    engine = Engine(RULES, None)
    return compare_bijective(gold, pred, engine, order_matters=flags.order_matters)
