"""Loading task files and predictions: versions refused, every bad line named by number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.errors import InputError
from score.predictions import CSV_INDEX, read_predictions
from score.result import QueryError
from score.tasks import instances, load_tasks
from tests.task_factory import make_task


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


@pytest.fixture
def tasks():
    return [
        make_task("t1", languages=("en", "ko")),
        make_task("t2"),
        make_task("u1", None),
    ]


def test_task_file_round_trip_and_instances(tmp_path, tasks):
    path = write_jsonl(tmp_path / "tasks.jsonl", tasks)
    loaded = load_tasks(path)
    assert [t["id"] for t in loaded] == ["t1", "t2", "u1"]
    assert [i.key for i in instances(loaded)] == [
        ("t1", "en"),
        ("t1", "ko"),
        ("t2", "en"),
        ("u1", "en"),
    ]


def test_unknown_task_format_version_is_refused(tmp_path, tasks):
    tasks[1]["schema_version"] = "9.0"
    path = write_jsonl(tmp_path / "tasks.jsonl", tasks)
    with pytest.raises(InputError) as info:
        load_tasks(path)
    assert info.value.line == 2 and info.value.task_id == "t2" and "9.0" in str(info.value)


def test_task_schema_violation_names_line_id_and_json_path(tmp_path, tasks):
    tasks[0]["tier"] = "easy"
    path = write_jsonl(tmp_path / "tasks.jsonl", tasks)
    with pytest.raises(InputError) as info:
        load_tasks(path)
    assert "tasks.jsonl:1 (task t1)" in str(info.value) and "$.tier" in str(info.value)


def test_duplicate_task_ids_are_refused(tmp_path, tasks):
    path = write_jsonl(tmp_path / "tasks.jsonl", [*tasks, tasks[0]])
    with pytest.raises(InputError, match="duplicate task id .first on line 1"):
        load_tasks(path)


def test_predictions_problems_carry_line_numbers(tmp_path, tasks):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"task_id": "t1", "output": "SELECT 1"},  # 1 fine
            "{not json",  # 2
            {"task_id": "nope", "sql": "SELECT 1"},  # 3 unknown task
            {"task_id": "t1", "output": "again"},  # 4 duplicate
            {"task_id": "t2", "language": "fr", "sql": "SELECT 1"},  # 5 unknown language
            {"task_id": "t2", "sql": "SELECT 1", "output": "x"},  # 6 both
            {"task_id": "t2"},  # 7 neither
            {"task_id": "t1", "language": "ko", "status": "generation_error"},  # 8 fine
            {"task_id": "t2", "output": None, "status": "weird"},  # 9 bad status
        ],
    )
    preds = read_predictions(path, tasks)
    assert [(p.line, p.reason) for p in preds.problems] == [
        (2, "malformed_json"),
        (3, "unknown_task"),
        (4, "duplicate"),
        (5, "unknown_language"),
        (6, "schema"),
        (7, "schema"),
        (9, "schema"),
    ]
    assert "first on line 1" in preds.problems[2].message
    assert set(preds.by_key) == {("t1", "en"), ("t1", "ko")}
    with pytest.raises(InputError, match="7 bad prediction line"):
        preds.raise_problems()


def test_several_runs_need_a_choice(tmp_path, tasks):
    path = write_jsonl(
        tmp_path / "p.jsonl",
        [
            {"task_id": "t1", "run": "a", "sql": "SELECT 1"},
            {"task_id": "t1", "run": "b", "sql": "SELECT 2"},
        ],
    )
    with pytest.raises(InputError, match="several runs"):
        read_predictions(path, tasks)
    chosen = read_predictions(path, tasks, run="b")
    assert chosen.run == "b" and chosen.by_key[("t1", "en")].sql == "SELECT 2"
    assert not chosen.problems


def test_csv_index_reads_relations_in_the_sandbox(tmp_path, tasks, executor):
    (tmp_path / "rel").mkdir()
    (tmp_path / "rel" / "t1.csv").write_text("n,name\n1130,all\n")
    path = write_jsonl(
        tmp_path / "index.jsonl",
        [{"task_id": "t1", "csv": "rel/t1.csv"}, {"task_id": "t2", "csv": None}],
    )
    preds = read_predictions(path, tasks)
    assert preds.format == CSV_INDEX and not preds.problems
    t1 = preds.by_key[("t1", "en")]
    assert t1.csv_folder == str(tmp_path.resolve())
    relation = executor.read_csv(t1.csv, t1.csv_folder)
    assert relation.columns == ("n", "name") and relation.rows() == [(1130, "all")]
    assert preds.by_key[("t2", "en")].csv is None
    with pytest.raises(QueryError, match="no such file"):
        executor.read_csv("missing.csv", tmp_path)
