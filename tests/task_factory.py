"""Valid task records for tests that need a task set without curating one.

A task pins the hash of its gold's result; here it is computed from the rows the test
says the gold returns (``expect``), never by running the gold, so a test whose gold
returns something else sees ``gold_drift``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from score.comparison.result_hash import result_sha256
from score.execution.result import QueryResult
from score.inputs.task_file import TASK_FORMAT_VERSION, task_file_text

#: Persons in the embedded database: what the default gold returns.
PERSONS = 1130


def pinned_hash(
    rows: Sequence[tuple], columns: Sequence[str] = ("n",), *, ordered: bool = False
) -> str:
    """The ``gold_result.sha256`` of a result holding ``rows``."""
    return result_sha256(QueryResult.from_rows(list(columns), list(rows)), ordered=ordered)


def write_task_file(path: Path, tasks: Iterable[dict[str, Any]]) -> Path:
    """A task file as ``sqlgold curate`` writes it (header with the set hash, then tasks)."""
    path.write_text(task_file_text(list(tasks)), encoding="utf-8")
    return path


def make_task(
    task_id: str,
    gold_sql: str | None = "SELECT count(*) AS n FROM cdm.person",
    *,
    tier: str = "simple",
    languages: tuple[str, ...] = ("en",),
    order_matters: bool = False,
    category: str | None = "person",
    expect: Sequence[tuple] = ((PERSONS,),),
    today: str | None = None,
    columns: Sequence[str] = ("n",),
    types: Sequence[str] = ("BIGINT",),
) -> dict[str, Any]:
    """A task whose gold returns ``expect`` (by default one column ``n``)."""
    answerable = gold_sql is not None
    questions = {lang: f"{task_id} question in {lang}" for lang in languages}
    return {
        "schema_version": TASK_FORMAT_VERSION,
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
        "gold_result": {
            "sha256": pinned_hash(expect, columns, ordered=order_matters),
            "rows": len(expect),
            "columns": list(columns),
            "types": list(types),
        }
        if answerable
        else None,
        "today": today,
        "transpile_rules": [],
        "origin": None,
        "notes": None,
    }


def scored_records(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    """:func:`score.scoring.pipeline.score_predictions`'s results as the records a run
    folder's ``results.jsonl`` holds."""
    from score.scoring.pipeline import score_predictions

    return [result.to_record() for result in score_predictions(*args, **kwargs)]
