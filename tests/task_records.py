"""Task records for the publish, manifest and diff tests, valid against the task schema.

They cover what the Parquet round trip must keep: nested lists (``features.tables``,
``gold_result.columns``), empty lists, nullable fields, questions with and without a
Korean version, unanswerable tasks (null gold SQL, ``unanswerable_because`` with one or
both keys) and feature objects that leave keys out.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path
from typing import Any

from score.inputs.schemas import validator
from score.inputs.task_file import TASK_FORMAT_VERSION, task_file_text
from tests.task_factory import PERSONS, pinned_hash

#: The gold result every sample task's gold returns on the embedded database.
PERSONS_RESULT = {
    "sha256": pinned_hash([(PERSONS,)]),
    "rows": 1,
    "columns": ["n"],
    "types": ["BIGINT"],
}

FULL_FEATURES = {
    "tables": ["person", "condition_occurrence"],
    "join_count": 1,
    "aggregates": ["count"],
    "window_functions": 0,
    "set_operations": [],
    "subqueries": 0,
    "ctes": 0,
    "nesting_depth": 1,
    "has_order_by": False,
    "has_limit": False,
    "has_distinct": True,
    "has_group_by": False,
}


def answerable(task_id: str, tier: str = "simple", *, ko: str | None = None, **fields) -> dict:
    question = f"How many persons match {task_id}?"
    task = {
        "schema_version": TASK_FORMAT_VERSION,
        "id": task_id,
        "question": question,
        "questions": {"en": question, **({"ko": ko} if ko else {})},
        "gold_sql": f"SELECT count(DISTINCT person_id) AS n FROM cdm.person -- {task_id}",
        "source_sql": f"SELECT COUNT(DISTINCT person_id) FROM @cdm.person -- {task_id}",
        "source_dialect": "ohdsi",
        "answer_sql": None,
        "answer_dialect": None,
        "tier": tier,
        "features": copy.deepcopy(FULL_FEATURES),
        "category": "cohort_count",
        "difficulty": None,
        "answerable": True,
        "order_matters": False,
        "unanswerable_because": None,
        "gold_result": dict(PERSONS_RESULT),
        "today": None,
        "transpile_rules": [],
        "origin": f"querylibrary:{task_id}.md",
        "notes": None,
    }
    task.update(fields)
    return task


def unanswerable(task_id: str, *, ko: str | None = None, **fields) -> dict:
    question = f"What do the clinical notes of {task_id} say?"
    task = {
        "schema_version": TASK_FORMAT_VERSION,
        "id": task_id,
        "question": question,
        "questions": {"en": question, **({"ko": ko} if ko else {})},
        "gold_sql": None,
        "source_sql": None,
        "source_dialect": None,
        "answer_sql": None,
        "answer_dialect": None,
        "tier": "unanswerable",
        "features": {},
        "category": "unanswerable",
        "difficulty": "hard",
        "answerable": False,
        "order_matters": False,
        "unanswerable_because": {"empty_tables": ["note"], "null_columns": []},
        "gold_result": None,
        "today": None,
        "transpile_rules": [],
        "origin": None,
        "notes": None,
    }
    task.update(fields)
    return task


def sample_tasks() -> list[dict]:
    """Ten tasks over all four tiers, sorted by id as a curated file is."""
    tasks = [
        answerable("cmp-001", "compositional", ko="조건을 만족하는 사람은 몇 명입니까?"),
        answerable(
            "cmp-002",
            "compositional",
            order_matters=True,
            features={
                **FULL_FEATURES,
                "ctes": 2,
                "has_order_by": True,
                "set_operations": ["union"],
            },
            gold_result={
                "sha256": pinned_hash(
                    [(2019, 5), (2020, 7), (2021, 9)], ["year", "n"], ordered=True
                ),
                "rows": 3,
                "columns": ["year", "n"],
                "types": ["BIGINT", "BIGINT"],
            },
            transpile_rules=["dateadd", "top_to_limit"],
        ),
        answerable("sch-001", "schema_aware", category=None, difficulty="medium"),
        answerable(
            "sch-002",
            "schema_aware",
            ko="당뇨병 환자는 몇 명?",
            answer_sql="SELECT 1",
            answer_dialect="duckdb",
            notes="Gold uses concept_ancestor; «unicode» kept.",
        ),
        answerable("sim-001", ko="사람은 몇 명입니까?"),
        answerable("sim-002", features={"tables": ["person"], "join_count": 0}),
        answerable(
            "sim-003",
            gold_result={
                "sha256": pinned_hash([(), ()], []),
                "rows": 2,
                "columns": [],
                "types": [],
            },
        ),
        answerable("sim-004", origin=None),
        unanswerable("una-001", ko="메모에는 무엇이 있습니까?"),
        unanswerable(
            "una-002", unanswerable_because={"null_columns": ["person.ethnicity_concept_id"]}
        ),
    ]
    return sorted(tasks, key=lambda t: t["id"])


def schema_errors(task: dict) -> list[str]:
    return [e.message for e in validator("task").iter_errors(task)]


def write_tasks(path: Path, tasks: list[dict]) -> Path:
    """A task file as curation writes it: the header with the set hash, then sorted keys,
    UTF-8, one task per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(task_file_text(tasks), encoding="utf-8")
    return path


def report_for(tasks: list[dict], fingerprint: str = "f" * 64, **extra: Any) -> dict:
    """A curation report with the keys publish reads (and extras it must tolerate)."""
    by_tier = Counter(t["tier"] for t in tasks)
    return {
        "format": "sqlgold.curation-report/1",
        "name": "omop",
        "database": {
            "path": "data/omop/synthea1k.duckdb",
            "schema": "cdm",
            "fingerprint": fingerprint,
        },
        "versions": {"sqlgold": "0.1.0", "sqlglot": "30.30.0", "duckdb": "2.0.1"},
        "counts": {
            "kept": len(tasks),
            "dropped": 3,
            "by_tier": {
                t: by_tier.get(t, 0)
                for t in ("simple", "compositional", "schema_aware", "unanswerable")
            },
            "by_category": {},
        },
        "comparator_profile": "sqlgold",
        "records": [],
        **extra,
    }


def write_inputs(folder: Path, tasks: list[dict], **report_extra: Any) -> Path:
    """``omop_tasks.jsonl`` and ``omop_report.json`` in ``folder``; the task file's path."""
    path = write_tasks(folder / "omop_tasks.jsonl", tasks)
    report = report_for(tasks, **report_extra)
    (folder / "omop_report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    return path


DATABASE_COLUMNS = [
    {
        "table": "condition_occurrence",
        "column": "condition_occurrence_id",
        "type": "BIGINT",
        "rows": 4211,
    },
    {"table": "condition_occurrence", "column": "person_id", "type": "BIGINT", "rows": 4211},
    {"table": "note", "column": "note_id", "type": "BIGINT", "rows": 0},
    {"table": "person", "column": "person_id", "type": "BIGINT", "rows": 1130},
    {"table": "person", "column": "ethnicity_concept_id", "type": "INTEGER", "rows": 1130},
]
