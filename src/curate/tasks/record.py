"""The task record: a source record and its verified gold, as schemas/task.schema.json has it."""

from __future__ import annotations

from typing import Any

from curate.sources.records import SourceRecord
from score.execution.executor import Executor
from score.inputs.task_file import TASK_FORMAT_VERSION as TASK_SCHEMA_VERSION


def task_record(
    record: SourceRecord,
    gold_sql: str | None,
    answer_sql: str | None,
    tier: str,
    features: dict[str, Any],
    order: bool,
    gold_result: dict[str, Any] | None,
    rules_applied: tuple[str, ...],
    executor: Executor,
) -> dict[str, Any]:
    """The task (validated later by the pipeline's validate stage), verified under the
    executor's fixed today (recorded as ``today``)."""
    questions = dict(record.questions or {})
    questions.setdefault("en", record.question)
    because = record.unanswerable_because
    return {
        "schema_version": TASK_SCHEMA_VERSION,
        "id": record.id,
        "question": record.question,
        "questions": dict(sorted(questions.items())),
        "gold_sql": gold_sql,
        "source_sql": record.gold_sql,
        "source_dialect": record.gold_dialect,
        "answer_sql": answer_sql,
        "answer_dialect": "duckdb" if answer_sql is not None else None,
        "tier": tier,
        "features": features,
        "category": record.category,
        "difficulty": record.difficulty,
        "answerable": record.answerable,
        "order_matters": order,
        "unanswerable_because": None
        if because is None
        else {
            "empty_tables": list(because.empty_tables),
            "null_columns": list(because.null_columns),
        },
        "gold_result": gold_result,
        "today": executor.settings.today.isoformat() if executor.settings.today else None,
        "transpile_rules": sorted(set(rules_applied)),
        "origin": origin_text(record),
        "notes": _notes(record),
    }


def _notes(record: SourceRecord) -> str | None:
    """The record's notes; for a question its source declares unanswerable, that
    declaration too (the task's ``unanswerable_because`` then names no table or column)."""
    because = record.unanswerable_because
    if because is None or not because.declared:
        return record.notes
    declared = f"unanswerable as declared by its source (not checked): {because.declared}"
    return declared if not record.notes else f"{record.notes}\n{declared}"


def origin_text(record: SourceRecord) -> str | None:
    """Where a record came from, as ``importer:file:page``."""
    o = record.origin
    if o is None:
        return None
    parts = [o.importer, o.file or "", o.page or ""]
    return ":".join(p for p in parts if p) or None
