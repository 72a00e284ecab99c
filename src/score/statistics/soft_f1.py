"""A run's soft F1 under ``--profile bird`` (BIRD mini-dev's partial credit over cells,
:mod:`score.comparison.soft_f1`): the mean over the answerable instances scored, x100.

An instance whose answer never produced a result (it failed, was missing, abstained,
cut off) scores 0, as BIRD's evaluator scores a query that fails; gold_error and
gold_drift instances are left out, as from every rate.  Each such record gets its 0
written (``soft_f1``), so ``results.jsonl`` holds every term of the mean.

>>> records = [
...     {"answerable": True, "outcome": "correct", "soft_f1": 1.0},
...     {"answerable": True, "outcome": "mismatch", "soft_f1": 0.5},
...     {"answerable": True, "outcome": "missing"},
...     {"answerable": True, "outcome": "gold_error"},
...     {"answerable": False, "outcome": "abstained"},
... ]
>>> soft_f1_summary(records)
{'value': 50.0, 'instances': 3}
>>> records[2]["soft_f1"], "soft_f1" in records[3]
(0.0, False)
"""

from __future__ import annotations

import math
from collections.abc import MutableMapping, Sequence
from typing import Any

from score.statistics.metrics import is_scored


def soft_f1_summary(records: Sequence[MutableMapping[str, Any]]) -> dict[str, Any]:
    """The run's soft F1 (``value``, x100; None without an instance) and how many
    instances it averages; fills in the 0 of each answerable record without a result."""
    terms = []
    for rec in records:
        if not rec["answerable"] or not is_scored(rec):
            continue
        if rec.get("soft_f1") is None:
            rec["soft_f1"] = 0.0
        terms.append(rec["soft_f1"])
    value = 100.0 * math.fsum(terms) / len(terms) if terms else None
    return {"value": value, "instances": len(terms)}
