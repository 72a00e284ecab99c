"""HealthLLM's ``results_match`` (seed 000): columns by content rather than alias, row
order ignored, numbers compared with a tolerance.

Our reading of the seed (its Julia source is not in the reference set): the engine of
:mod:`score.comparison.profiles.bijective` with Julia's value semantics, i.e. ``isapprox`` with its
default relative tolerance ``sqrt(eps(Float64))`` (about 1.5e-8, no absolute term),
``true == 1`` (Bool is a Number in Julia), ``missing`` equal to ``missing``, a DATE
equal to its midnight DateTime (Julia promotes Date to DateTime), strings exact.  Rows
are always a multiset: the seed ignores row order even when the gold has an ORDER BY.
The column count must match.

>>> from score.execution.result import QueryResult
>>> g = QueryResult.from_rows(["n"], [(True,), (False,)])
>>> compare_healthllm(g, QueryResult.from_rows(["k"], [(0,), (1,)]), Flags()).match
True
"""

from __future__ import annotations

import numpy as np

from score.comparison.profiles.base import Flags, Verdict
from score.comparison.profiles.bijective import compare_bijective
from score.comparison.profiles.column_checks import Engine
from score.comparison.values import Rules, Tolerance
from score.execution.result import QueryResult

RULES = Rules(bool_is_number=True, date_is_timestamp=True, nan_equals_nan=True)
DEFAULT_TOLERANCE = Tolerance(rel=float(np.sqrt(np.finfo(np.float64).eps)), abs=0.0)


def compare_healthllm(gold: QueryResult, pred: QueryResult, flags: Flags) -> Verdict:
    """HealthLLM's verdict; ``flags.order_matters`` and ``condition_cols`` are ignored."""
    engine = Engine(RULES, flags.tolerance or DEFAULT_TOLERANCE)
    return compare_bijective(gold, pred, engine, order_matters=False)
