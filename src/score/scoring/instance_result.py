"""What scoring says of one instance: its outcome, its reason and what it ran.

An :class:`InstanceResult` is filled in as the instance goes through the pipeline and
written as one line of ``results.jsonl`` (:meth:`InstanceResult.to_record`; the keys
are ``schemas/results.schema.json``'s, which :mod:`score.statistics.metrics` reads).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from typing import Any

from score.inputs.predictions import Prediction
from score.inputs.task_set import Instance
from score.scoring.decision import Decision
from score.scoring.outcomes import Outcome


@dataclass
class InstanceResult:
    """One instance (a task in one language) as scored."""

    task_id: str
    language: str
    run: str
    tier: str
    category: str | None
    difficulty: str | None
    answerable: bool
    output: str | None = None
    context: str | None = None
    prediction_line: int | None = None
    outcome: Outcome | None = None
    reason: str = ""
    sql: str | None = None
    executed_sql: str | None = None
    lf_match: bool | None = None
    timings: dict[str, float] = field(default_factory=dict)
    preview: dict[str, Any] | None = None  # both results' first rows (result_preview.py)
    #: the dialect the prediction was written for, when it was transpiled to the engine's
    #: to run (None: it ran as written); in results.jsonl only when set
    transpiled_from: str | None = None
    #: a mismatch's cause, where one change explains it (comparison/mismatch_cause.py):
    #: ``{"name", "detail"}``; in results.jsonl only when set
    mismatch_cause: dict[str, str] | None = None
    #: BIRD mini-dev's soft F1 (profile ``bird`` only; comparison/soft_f1.py); in
    #: results.jsonl only when set
    soft_f1: float | None = None
    #: which gold a task with alternative golds was matched by (0 the gold, or none; k
    #: the k-th alternative: scoring/alternative_golds.py); in results.jsonl only when set
    matched_gold: int | None = None
    #: for SQL taken from a raw output, the extraction rule that took it (in
    #: results.jsonl only when set)
    extracted_by: str | None = None

    @classmethod
    def start(cls, instance: Instance, run: str, prediction: Prediction | None) -> InstanceResult:
        """The result of ``instance`` before anything is decided."""
        task = instance.task
        return cls(
            task_id=instance.task_id,
            language=instance.language,
            run=run,
            tier=task["tier"],
            category=task.get("category"),
            difficulty=task.get("difficulty"),
            answerable=task["answerable"],
            output=prediction.output if prediction else None,
            context=prediction.context if prediction else None,
            prediction_line=prediction.line if prediction else None,
        )

    @property
    def decided(self) -> bool:
        return self.outcome is not None

    def settle(self, decision: Decision) -> None:
        """Take ``decision`` as this instance's outcome and reason."""
        self.outcome, self.reason = decision.outcome, decision.reason

    def to_record(self) -> dict[str, Any]:
        """The ``results.jsonl`` line of this instance, as a JSON object of its own
        (its dicts copied; ``dataclasses.asdict`` copied every cell of the preview one
        call at a time, a tenth of a second per 2,000 instances)."""
        record = {name: getattr(self, name) for name in _FIELDS}
        record["outcome"] = None if self.outcome is None else self.outcome.value
        record["timings"] = dict(self.timings)
        if self.preview is not None:
            record["preview"] = copy.deepcopy(self.preview)
        if self.transpiled_from is None:
            del record["transpiled_from"]
        if self.soft_f1 is None:
            del record["soft_f1"]
        if self.matched_gold is None:
            del record["matched_gold"]
        if self.mismatch_cause is None:
            del record["mismatch_cause"]
        else:
            record["mismatch_cause"] = dict(self.mismatch_cause)
        if self.extracted_by is None:
            del record["extracted_by"]
        return record


_FIELDS = tuple(f.name for f in fields(InstanceResult))
