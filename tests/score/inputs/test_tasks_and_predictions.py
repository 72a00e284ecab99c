"""Loading task files and predictions: versions refused, every bad line named by number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.errors import InputError
from score.execution.result import QueryError
from score.inputs.predictions import CSV_INDEX, read_predictions
from score.inputs.task_file import task_file_header, task_line
from score.inputs.task_set import instances, load_tasks
from tests.task_factory import make_task, write_task_file


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def write_tasks_as_given(path: Path, tasks) -> Path:
    """A task file with a correct header and the tasks in the order given (line 2 on)."""
    unique = list({t["id"]: t for t in tasks}.values())
    path.write_text(task_line(task_file_header(unique)) + "".join(task_line(t) for t in tasks))
    return path


@pytest.fixture
def tasks():
    return [
        make_task("t1", languages=("en", "ko")),
        make_task("t2"),
        make_task("u1", None),
    ]


def test_task_file_round_trip_and_instances(tmp_path, tasks):
    path = write_task_file(tmp_path / "tasks.jsonl", tasks)
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
    path = write_tasks_as_given(tmp_path / "tasks.jsonl", tasks)
    with pytest.raises(InputError) as info:
        load_tasks(path)
    assert info.value.line == 3 and info.value.task_id == "t2" and "9.0" in str(info.value)


def test_task_schema_violation_names_line_id_and_json_path(tmp_path, tasks):
    tasks[0]["tier"] = "easy"
    path = write_tasks_as_given(tmp_path / "tasks.jsonl", tasks)
    with pytest.raises(InputError) as info:
        load_tasks(path)
    assert "tasks.jsonl:2 (task t1)" in str(info.value) and "$.tier" in str(info.value)


def test_duplicate_task_ids_are_refused(tmp_path, tasks):
    path = write_tasks_as_given(tmp_path / "tasks.jsonl", [*tasks, tasks[0]])
    with pytest.raises(InputError, match="duplicate task id .first on line 2"):
        load_tasks(path)


def test_a_format_1_0_task_file_is_refused_naming_how_to_recurate(tmp_path, tasks):
    """Format 1.0 files have no header, today or pinned gold hash."""
    old = []
    for task in tasks:
        task = {k: v for k, v in task.items() if k != "today"}
        task["schema_version"] = "1.0"
        if task["gold_result"]:
            task["gold_result"] = {k: v for k, v in task["gold_result"].items() if k != "sha256"}
        old.append(task)
    path = write_jsonl(tmp_path / "old_tasks.jsonl", old)
    with pytest.raises(InputError, match=r"task format '1.0' .*sqlgold curate SOURCE") as info:
        load_tasks(path)
    assert info.value.line == 1 and "old_tasks.jsonl" in str(info.value)


def test_a_task_file_without_its_header_is_refused(tmp_path, tasks):
    path = write_jsonl(tmp_path / "tasks.jsonl", tasks)
    with pytest.raises(InputError, match="no header line"):
        load_tasks(path)


def test_a_gold_edited_by_hand_is_refused_without_any_manifest(tmp_path, tasks):
    """The issue: the task file carries its set hash, so an edited gold is refused even
    when no release manifest is given."""
    path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    lines = path.read_text().splitlines(keepends=True)
    lines[2] = lines[2].replace("count(*)", "count(*) + 1")
    path.write_text("".join(lines))
    with pytest.raises(InputError, match="no longer match the set hash.*re-curate") as info:
        load_tasks(path)
    assert "tasks.jsonl:1" in str(info.value)
    # a pinned gold hash edited to hide a drift is refused the same way
    path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    text = path.read_text().replace(tasks[0]["gold_result"]["sha256"], "0" * 64, 1)
    path.write_text(text)
    with pytest.raises(InputError, match="no longer match the set hash"):
        load_tasks(path)
    # so is a removed task
    path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))
    with pytest.raises(InputError, match="2 tasks, the header says 3"):
        load_tasks(path)


def test_bytes_that_are_not_utf8_are_an_error_naming_the_line(tmp_path, tasks):
    path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    data = path.read_bytes().replace(b"t2 question in en", b"t2 question \xff", 1)
    path.write_bytes(data)
    with pytest.raises(InputError, match=r"tasks.jsonl:3: not UTF-8 text \(byte 0xff"):
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
