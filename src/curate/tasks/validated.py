"""Stage validate: a task record checked against ``schemas/task.schema.json``, and the
verdict that keeps it."""

from __future__ import annotations

from typing import Any

from curate.tasks.verdict import Verdict, dropped
from curate.verify.gold import Drop
from curate.verify.identical_results import ResultPrint
from curate.verify.omop_advisories import Advisory
from curate.verify.smells import Smell
from score.inputs.schemas import validation_errors


def validated(
    task: dict[str, Any],
    notes: list[str],
    warnings: tuple[str, ...] = (),
    printed: ResultPrint | None = None,
    smells: tuple[Smell, ...] = (),
    advice: tuple[Advisory, ...] = (),
    concepts: tuple[tuple[int, str], ...] = (),
) -> tuple[dict[str, Any] | None, Verdict]:
    """The task and its kept verdict (its smells and advisories listed), or the drop of
    a task the task schema refuses (stage ``validate``, rule ``task_schema``)."""
    problems = validation_errors("task", task)
    if problems:
        drop = Drop("validate", "task_schema", "; ".join(problems))
        return dropped(task["id"], drop, notes)
    verdict = Verdict(
        task["id"],
        "kept",
        tier=task["tier"],
        notes=tuple(notes),
        warnings=warnings,
        result=printed,
        smells=tuple(s.to_dict() for s in smells),
        advisories=tuple(a.to_dict() for a in advice),
        concepts=concepts,
    )
    return task, verdict
