"""The examples document holds the train side's answers and never a test task's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from curate.grounding.common import GroundingError
from curate.grounding.examples_doc import (
    EXAMPLES_DOC,
    examples_document,
    leaked_tasks,
    write_examples_document,
)
from score.inputs.task_file import TASK_FORMAT_VERSION
from tests.paths import REPO

TASK_SCHEMA = json.loads((REPO / "schemas" / "task.schema.json").read_text(encoding="utf-8"))

_GOLDS = {
    "q01": (
        "How many persons are in the database?",
        "SELECT count(person_id) AS n FROM cdm.person",
    ),
    "q02": (
        "How many persons were born before 1950?",
        "SELECT count(*) AS n FROM cdm.person WHERE year_of_birth < 1950",
    ),
    "q03": (
        "How many visits of each kind are there?",
        "SELECT visit_concept_id, count(*) AS n\nFROM cdm.visit_occurrence\n"
        "GROUP BY visit_concept_id",
    ),
    "q04": (
        "How many persons have type 2 diabetes?",
        "SELECT count(DISTINCT person_id) AS n FROM cdm.condition_occurrence "
        "WHERE condition_concept_id = 201826",
    ),
    "q05": (
        "How many persons died?",
        "SELECT count(DISTINCT person_id) AS n FROM cdm.death",
    ),
    "q06": (
        "What is the earliest visit start date?",
        "SELECT min(visit_start_date) AS first_visit FROM cdm.visit_occurrence",
    ),
}


def _task(task_id: str, question: str, gold: str, tier: str = "simple") -> dict:
    answer = gold.replace("AS n", "AS answer_n")
    return {
        "schema_version": TASK_FORMAT_VERSION,
        "id": task_id,
        "question": question,
        "questions": {"en": question},
        "gold_sql": gold,
        "source_sql": gold,
        "source_dialect": "duckdb",
        "answer_sql": answer,
        "answer_dialect": "duckdb",
        "tier": tier,
        "features": {"tables": ["person"]},
        "category": None,
        "difficulty": None,
        "answerable": True,
        "order_matters": False,
        "unanswerable_because": None,
        # never scored here: the pinned hash only has to have its form
        "gold_result": {
            "sha256": hashlib.sha256(gold.encode()).hexdigest(),
            "rows": 1,
            "columns": ["n"],
            "types": ["BIGINT"],
        },
        "today": None,
        "transpile_rules": [],
    }


def _unanswerable(task_id: str) -> dict:
    return {
        **_task(task_id, "How many clinical notes mention smoking?", "SELECT 1"),
        "gold_sql": None,
        "source_sql": None,
        "answer_sql": None,
        "tier": "unanswerable",
        "features": {},
        "answerable": False,
        "unanswerable_because": {"empty_tables": ["note"], "null_columns": []},
        "gold_result": None,
    }


@pytest.fixture()
def tasks() -> list[dict]:
    built = [_task(i, q, g) for i, (q, g) in _GOLDS.items()] + [_unanswerable("u01")]
    for t in built:
        jsonschema.validate(t, TASK_SCHEMA)
    return built


def _split(tasks: list[dict]) -> dict[str, list[dict]]:
    """Odd-numbered tasks to test, the rest to train (split_tasks' output shape)."""
    test_ids = {"q01", "q03", "q05"}
    return {
        "train": [t for t in tasks if t["id"] not in test_ids],
        "test": [t for t in tasks if t["id"] in test_ids],
    }


def test_no_test_answer_appears(tasks) -> None:
    split = _split(tasks)
    doc = examples_document(split["train"])
    assert doc is not None
    for t in split["test"]:
        assert t["gold_sql"] not in doc
        assert t["answer_sql"] not in doc
        assert t["question"] not in doc
    assert leaked_tasks(doc, split["test"]) == []
    for t in split["train"]:
        if t["answerable"]:
            assert t["gold_sql"] in doc and t["question"] in doc


def test_no_test_answer_appears_with_split_tasks(tasks) -> None:
    split_module = pytest.importorskip("score.inputs.split")
    split = split_module.split_tasks(tasks, test_fraction=0.5, seed=0)
    assert split["train"] and split["test"]
    doc = examples_document(split["train"])
    test_answers = [t[k] for t in split["test"] for k in ("gold_sql", "answer_sql") if t[k]]
    if doc is not None:
        assert not [a for a in test_answers if a in doc]
        assert leaked_tasks(doc, split["test"]) == []


def test_leak_is_detected_even_with_other_whitespace(tasks) -> None:
    doc = examples_document(tasks)
    planted = {
        **tasks[2],
        "id": "t-copy",
        "gold_sql": "SELECT  visit_concept_id,\tcount(*) "
        "AS n FROM cdm.visit_occurrence GROUP BY visit_concept_id",
    }
    assert leaked_tasks(doc, [planted]) == ["t-copy"]
    by_answer = {
        **tasks[0],
        "id": "t-answer",
        "gold_sql": "SELECT 42",
        "answer_sql": tasks[1]["gold_sql"],
    }
    assert leaked_tasks(doc, [by_answer]) == ["t-answer"]
    assert leaked_tasks(None, [planted]) == []


def test_a_test_query_inside_a_longer_train_query_is_no_leak(tasks) -> None:
    doc = examples_document([tasks[1]])  # ... FROM cdm.person WHERE year_of_birth < 1950
    shorter = {**tasks[0], "gold_sql": "SELECT count(*) AS n FROM cdm.person", "answer_sql": None}
    assert shorter["gold_sql"] in doc
    assert leaked_tasks(doc, [shorter]) == []
    same = {**shorter, "gold_sql": tasks[1]["gold_sql"] + ";"}
    assert leaked_tasks(doc, [same]) == [shorter["id"]]


def test_order_is_by_id_and_input_order_does_not_matter(tasks) -> None:
    doc = examples_document(tasks)
    assert examples_document(list(reversed(tasks))) == doc
    positions = [doc.index(f"Task `{i}`") for i in sorted(_GOLDS)]
    assert positions == sorted(positions)
    assert doc.endswith("\n") and not doc.endswith("\n\n")


def test_unanswerable_tasks_are_left_out(tasks) -> None:
    doc = examples_document(tasks)
    assert "u01" not in doc
    assert f"{len(_GOLDS)} examples." in doc
    assert examples_document([_unanswerable("u02")]) is None


def test_no_train_side_means_no_document(tasks) -> None:
    assert examples_document([]) is None


def test_duplicate_ids_are_refused(tasks) -> None:
    with pytest.raises(GroundingError, match="q01"):
        examples_document([tasks[0], dict(tasks[0])])


def test_writer_writes_atomically_and_removes_a_stale_file(tasks, tmp_path: Path) -> None:
    split = _split(tasks)
    path = write_examples_document(tmp_path, split["train"], split["test"])
    assert path == tmp_path / EXAMPLES_DOC
    first = path.read_bytes()
    assert write_examples_document(tmp_path, split["train"], split["test"]) == path
    assert path.read_bytes() == first
    assert [p.name for p in tmp_path.iterdir()] == [EXAMPLES_DOC]

    # test fraction 1.0: every task is tested, nothing may be shown, the old file goes
    assert write_examples_document(tmp_path, [], tasks) is None
    assert not path.exists()
    assert write_examples_document(tmp_path, [], tasks) is None


def test_writer_refuses_a_leaking_document(tasks, tmp_path: Path) -> None:
    with pytest.raises(GroundingError, match="q02"):
        write_examples_document(tmp_path, tasks, [tasks[1]])
    assert not (tmp_path / EXAMPLES_DOC).exists()
