"""The comparison profiles by name, without importing any of them.

Naming a profile (``--profile`` choices, a dataset card's profile line) must not cost
the imports of every comparator (numpy, pyarrow, scipy): each entry names the function
that implements it as ``module:function``, imported the first time the profile compares.

>>> "sqlgold" in profile_names()
True
>>> PROFILES["bird"].summary
'BIRD EX: set(pred) == set(gold)'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class Profile:
    """A named comparison rule: a pure function of (gold, prediction, flags).

    ``target`` is the function, as ``module:function``; ``takes`` names the options
    beyond the task flags that the profile accepts (``tolerance``, ``tie_k``);
    :func:`score.comparison.compare.compare` refuses the others.
    """

    name: str
    target: str
    summary: str
    takes: frozenset[str] = frozenset()

    @property
    def comparator(self) -> Callable[..., Any]:
        """The comparison function (imported on first use)."""
        return _load(self.target)


@cache
def _load(target: str) -> Callable[..., Any]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile(
            "sqlgold",
            "score.comparison.profiles.sqlgold:compare_sqlgold",
            "sqlgold's own rule: content-mapped columns, multiset rows, typed values, "
            "numeric tolerance",
            frozenset({"tolerance"}),
        ),
        Profile(
            "healthllm",
            "score.comparison.profiles.healthllm:compare_healthllm",
            "HealthLLM results_match: columns by content, row order ignored, numeric tolerance",
            frozenset({"tolerance"}),
        ),
        Profile(
            "spider-ts",
            "score.comparison.profiles.spider_ts:compare_spider_ts",
            "Spider test-suite result_eq with its quick_rej quirk",
        ),
        Profile(
            "spider2",
            "score.comparison.profiles.spider2:compare_spider2",
            "Spider 2.0 compare_pandas_table after a CSV round trip",
        ),
        Profile(
            "ehrsql2024",
            "score.comparison.profiles.ehrsql:compare_ehrsql",
            "EHRSQL 2024 process_answer: 3-decimal text, sorted, first 100 rows",
        ),
        Profile(
            "snuh",
            "score.comparison.profiles.snuh:compare_snuh",
            "Synthetic-SNUH: 3-decimal rounding, all rows, NULL its own value, column "
            "permutation, multiset rows",
        ),
        Profile(
            "bird",
            "score.comparison.profiles.bird:compare_bird",
            "BIRD EX: set(pred) == set(gold)",
        ),
        Profile(
            "set",
            "score.comparison.profiles.bird:compare_set",
            "BULL / FinSQL EX: set(pred) == set(gold)",
        ),
        Profile(
            "text2omop",
            "score.comparison.profiles.text2omop:compare_text2omop",
            "TEXT-TO-OMOP results_equal: NULL as '', each row's values sorted by (type, "
            "repr), rows sorted",
        ),
        Profile(
            "any_k_from_tie_set",
            "score.comparison.profiles.ties:compare_any_k",
            "StreamSQLBench: k rows chosen from gold's tie set, over spider2",
            frozenset({"tie_k"}),
        ),
        Profile(
            "any_one_argmax",
            "score.comparison.profiles.ties:compare_any_one",
            "StreamSQLBench: any one of gold's tied best rows, over spider2",
        ),
    )
}


def profile_names() -> tuple[str, ...]:
    """The known profile names, sorted."""
    return tuple(sorted(PROFILES))
