"""Seed 004's two input-blind priors, scored by the same code as any model: abstain on
every item (EHRSQL-2024's simplest baseline) and ``SELECT 0`` for every item.

>>> sorted(PRIORS)
['abstain', 'select0']
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from score.inputs.predictions import Prediction
from score.inputs.task_set import instances

#: Prior kind -> the run label its predictions carry.
PRIORS = {"abstain": "prior/abstain-all", "select0": "prior/select-0"}


def prior_predictions(
    tasks: Iterable[dict[str, Any]], kind: str
) -> dict[tuple[str, str], Prediction]:
    """The prior ``kind`` as ordinary predictions for every instance: ``abstain``
    answers ABSTAIN, ``select0`` answers ``SELECT 0``."""
    if kind not in PRIORS:
        raise ValueError(f"unknown prior {kind!r}; known: {', '.join(PRIORS)}")
    made = {}
    for instance in instances(tasks):
        if kind == "abstain":
            made[instance.key] = Prediction(
                instance.task_id, instance.language, PRIORS[kind], output="ABSTAIN"
            )
        else:
            made[instance.key] = Prediction(
                instance.task_id, instance.language, PRIORS[kind], sql="SELECT 0", kind="sql"
            )
    return made
