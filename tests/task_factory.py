"""Valid task records for tests that need a task set without curating one."""

from __future__ import annotations

from typing import Any


def make_task(
    task_id: str,
    gold_sql: str | None = "SELECT count(*) AS n FROM cdm.person",
    *,
    tier: str = "simple",
    languages: tuple[str, ...] = ("en",),
    order_matters: bool = False,
    category: str | None = "person",
    rows: int = 1,
) -> dict[str, Any]:
    answerable = gold_sql is not None
    questions = {lang: f"{task_id} question in {lang}" for lang in languages}
    return {
        "schema_version": "1.0",
        "id": task_id,
        "question": questions.get("en", f"{task_id} question"),
        "questions": {"en": f"{task_id} question in en", **questions},
        "gold_sql": gold_sql,
        "source_sql": gold_sql,
        "source_dialect": "duckdb" if answerable else None,
        "answer_sql": None,
        "answer_dialect": None,
        "tier": tier if answerable else "unanswerable",
        "features": {},
        "category": category,
        "difficulty": "easy",
        "answerable": answerable,
        "order_matters": order_matters,
        "unanswerable_because": None
        if answerable
        else {"empty_tables": ["note"], "null_columns": []},
        "gold_result": {"rows": rows, "columns": ["n"], "types": ["BIGINT"]}
        if answerable
        else None,
        "transpile_rules": [],
        "origin": None,
        "notes": None,
    }
