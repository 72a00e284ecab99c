"""Item and set hashes, and the refusal of a task file that no longer matches its manifest."""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

import pytest

import score.inputs.task_manifest as tm
from score.errors import InputError
from score.inputs.task_manifest import (
    ITEM_FIELDS,
    MANIFEST_FORMAT,
    check_manifest,
    item_hash,
    manifest_items,
    read_manifest,
    set_hash,
    verify_tasks,
)
from score.inputs.task_set import load_tasks
from tests.task_records import answerable, sample_tasks, schema_errors, unanswerable, write_tasks


def test_sample_tasks_are_valid_task_records():
    for task in sample_tasks():
        assert schema_errors(task) == [], task["id"]


def test_score_does_not_import_curate():
    tree = ast.parse(Path(tm.__file__).read_text(encoding="utf-8"))
    modules = [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)] + [
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names
    ]
    assert not [m for m in modules if m.split(".")[0] == "curate"]


def test_item_hash_is_sha256_of_the_canonical_item_fields():
    task = answerable("q1", ko="질문")
    fields = {f: task[f] for f in ITEM_FIELDS if "." not in f}
    fields["gold_result.sha256"] = task["gold_result"]["sha256"]
    canonical = json.dumps(fields, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    assert item_hash(task) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", "q2"),
        ("question", "Another question?"),
        ("questions", {"en": "How many persons match q1?", "ko": "새 질문"}),
        ("gold_sql", "SELECT 2"),
        ("tier", "compositional"),
        ("order_matters", True),
        ("answerable", False),
        ("category", "other"),
        ("today", "2025-12-31"),
        ("gold_result", {"sha256": "0" * 64, "rows": 1, "columns": ["n"], "types": ["BIGINT"]}),
    ],
)
def test_each_item_field_changes_the_hash(field, value):
    task = answerable("q1")
    assert item_hash({**task, field: value}) != item_hash(task)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("features", {}),
        ("notes", "a new note"),
        ("origin", None),
        ("transpile_rules", ["x"]),
        ("source_sql", "SELECT 99"),
        ("difficulty", "hard"),
    ],
)
def test_fields_outside_the_item_do_not_change_the_hash(field, value):
    task = answerable("q1")
    assert item_hash({**task, field: value}) == item_hash(task)


def test_the_gold_results_shape_is_outside_the_item_but_its_hash_is_inside():
    task = answerable("q1")
    reshaped = {**task["gold_result"], "rows": 9, "columns": ["x"], "types": ["INTEGER"]}
    assert item_hash({**task, "gold_result": reshaped}) == item_hash(task)


def test_a_question_in_another_language_changes_the_hash():
    assert item_hash(answerable("q1", ko="가")) != item_hash(answerable("q1", ko="나"))


def test_set_hash_ignores_order_and_sees_every_item():
    tasks = sample_tasks()
    assert set_hash(tasks) == set_hash(list(reversed(tasks)))
    assert set_hash(tasks) != set_hash(tasks[:-1])
    lines = "".join(f"{t['id']}\t{item_hash(t)}\n" for t in sorted(tasks, key=lambda t: t["id"]))
    assert set_hash(tasks) == hashlib.sha256(lines.encode()).hexdigest()


#: sha256sum of the canonical JSON in the test below, computed outside Python.
PINNED_ITEM_HASH = "a90df8b124d9b708b52d97a68456a6cbe4b5948d41c9d9b70922945c21d17444"


def test_pinned_hash_of_a_fixed_item():
    task = {
        "id": "q1",
        "question": "How many persons?",
        "questions": {"en": "How many persons?", "ko": "사람은 몇 명?"},
        "gold_sql": "SELECT count(*) FROM cdm.person",
        "tier": "simple",
        "order_matters": False,
        "answerable": True,
        "category": None,
        "today": "2025-12-31",
        "gold_result": {"sha256": "ab" * 32, "rows": 1, "columns": ["n"], "types": ["BIGINT"]},
    }
    # printf '%s' '<the canonical JSON below>' | sha256sum
    canonical = (
        '{"answerable":true,"category":null,"gold_result.sha256":"' + "ab" * 32 + '",'
        '"gold_sql":"SELECT count(*) FROM cdm.person",'
        '"id":"q1","order_matters":false,"question":"How many persons?",'
        '"questions":{"en":"How many persons?","ko":"사람은 몇 명?"},"tier":"simple",'
        '"today":"2025-12-31"}'
    )
    assert tm.canonical_json({f: tm.item_field(task, f) for f in ITEM_FIELDS}) == canonical
    assert item_hash(task) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert item_hash(task) == PINNED_ITEM_HASH


def test_check_manifest_names_changed_added_and_removed_items():
    tasks = sample_tasks()
    manifest = manifest_items(tasks)
    assert check_manifest(tasks, manifest) == []
    edited = [dict(t) for t in tasks if t["id"] != "sim-002"]
    edited[0]["gold_sql"] = "SELECT 42"
    edited.append(unanswerable("una-009"))
    assert check_manifest(edited, manifest) == sorted([tasks[0]["id"], "sim-002", "una-009"])


def test_duplicate_ids_are_refused():
    with pytest.raises(InputError, match="duplicate") as e:
        set_hash([answerable("a"), answerable("a")])
    assert e.value.task_id == "a"


def release_manifest(tasks, **extra):
    return {"format": MANIFEST_FORMAT, "version": "0.1.0", **manifest_items(tasks), **extra}


def write_manifest(folder: Path, manifest: dict) -> Path:
    path = folder / "manifest.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    return path


def test_the_loader_accepts_a_matching_file(tmp_path):
    tasks = sample_tasks()
    task_file = write_tasks(tmp_path / "t.jsonl", tasks)
    write_manifest(tmp_path, release_manifest(tasks))
    assert load_tasks(task_file, manifest=tmp_path) == tasks  # a folder or the file itself
    assert load_tasks(task_file, manifest=tmp_path / "manifest.json") == tasks


def test_the_loader_refuses_a_changed_file_naming_the_items(tmp_path):
    tasks = sample_tasks()
    manifest_path = write_manifest(tmp_path, release_manifest(tasks))
    edited = [dict(t) for t in tasks[1:]]  # cmp-001 removed
    edited[0]["questions"] = {**edited[0]["questions"], "ko": "바뀐 질문"}  # cmp-002 changed
    edited[3]["order_matters"] = True  # sim-001 changed
    edited.append(answerable("sim-999"))  # added
    task_file = write_tasks(tmp_path / "t.jsonl", edited)
    with pytest.raises(InputError) as e:
        load_tasks(task_file, manifest=manifest_path)
    message = str(e.value)
    assert message.startswith(f"[manifest] {task_file}: ")
    assert "release 0.1.0" in message
    assert "changed cmp-002, sim-001; added sim-999; removed cmp-001" in message


def test_an_edit_outside_the_items_still_loads(tmp_path):
    tasks = sample_tasks()
    manifest_path = write_manifest(tmp_path, release_manifest(tasks))
    edited = [{**t, "notes": "reviewed"} for t in tasks]
    verify_tasks(edited, read_manifest(manifest_path))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "sqlgold.manifest/3"}, "unknown manifest format"),
        ({"format": "sqlgold.manifest/1"}, "publish a new version from a re-curated task file"),
        ({"format": None}, "unknown manifest format"),
        ({"item_fields": ["id", "gold_sql"]}, "hashes items over"),
        ({"set_sha256": "0" * 64}, "set_sha256 does not match"),
        ({"items": {"a": 1}}, "'items' must map"),
    ],
)
def test_a_bad_manifest_is_refused(tmp_path, change, message):
    manifest = {**release_manifest(sample_tasks()), **change}
    with pytest.raises(InputError, match=message):
        read_manifest(write_manifest(tmp_path, manifest))


def test_missing_or_malformed_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no manifest"):
        read_manifest(tmp_path)
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match="cannot read"):
        read_manifest(tmp_path)
    bad = tmp_path / "t.jsonl"
    write_tasks(bad, sample_tasks()[:1])
    bad.write_text(bad.read_text(encoding="utf-8") + "[1]\n", encoding="utf-8")
    with pytest.raises(InputError) as e:
        load_tasks(bad)
    assert e.value.line == 3
