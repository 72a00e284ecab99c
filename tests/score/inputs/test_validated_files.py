"""A task file validated whole is not validated against the schema again while its bytes,
the schema and sqlgold's task formats stay the same (score.inputs.validated_files)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from score.errors import InputError
from score.inputs import task_file
from score.inputs.task_set import open_task_set
from score.inputs.validated_files import ValidatedFiles
from tests.task_factory import make_task, write_task_file


@pytest.fixture
def schema_checks(monkeypatch) -> list[str]:
    """The ids of the tasks validated against the schema, in order."""
    seen: list[str] = []
    real = task_file.validation_errors

    def counting(name, record):
        seen.append(record.get("id"))
        return real(name, record)

    monkeypatch.setattr(task_file, "validation_errors", counting)
    return seen


def _file(tmp_path: Path, n: int = 3) -> Path:
    return write_task_file(tmp_path / "tasks.jsonl", [make_task(f"t{i}") for i in range(n)])


def test_the_same_bytes_are_validated_once(tmp_path, schema_checks):
    path = _file(tmp_path)
    memo = ValidatedFiles(tmp_path / "memo")
    first = open_task_set(path, validated=memo).tasks
    assert schema_checks == ["t0", "t1", "t2"]
    again = open_task_set(path, validated=memo).tasks
    assert schema_checks == ["t0", "t1", "t2"]  # not validated again
    assert again == first
    open_task_set(path)  # without a memo: validated
    assert len(schema_checks) == 6


def test_an_edited_file_is_validated_again_and_refused(tmp_path, schema_checks):
    path = _file(tmp_path)
    memo = ValidatedFiles(tmp_path / "memo")
    open_task_set(path, validated=memo)
    lines = path.read_text().splitlines()
    task = json.loads(lines[2])
    task["tier"] = "no such tier"
    lines[2] = json.dumps(task)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as caught:
        open_task_set(path, validated=memo)
    assert caught.value.line == 3 and "tier" in str(caught.value)
    assert schema_checks[3:] == ["t0", "t1"]  # validated again, up to the bad task


def test_a_changed_schema_validates_again(tmp_path, monkeypatch, schema_checks):
    import score.inputs.validated_files as vf

    path = _file(tmp_path)
    memo = ValidatedFiles(tmp_path / "memo")
    open_task_set(path, validated=memo)
    other = tmp_path / "task.schema.json"
    other.write_text(vf.schema_path("task").read_text() + "\n")
    monkeypatch.setattr(vf, "schema_path", lambda name: other)
    open_task_set(path, validated=memo)
    assert len(schema_checks) == 6


def test_the_set_hash_and_duplicates_are_checked_on_every_read(tmp_path):
    path = _file(tmp_path)
    memo = ValidatedFiles(tmp_path / "memo")
    open_task_set(path, validated=memo)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines, lines[1]]) + "\n")  # a task twice
    with pytest.raises(InputError, match="duplicate task id"):
        open_task_set(path, validated=memo)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_memo_folder_that_cannot_be_written_is_no_error(tmp_path, schema_checks):
    path = _file(tmp_path)
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        open_task_set(path, validated=ValidatedFiles(folder))
        open_task_set(path, validated=ValidatedFiles(folder))
    finally:
        folder.chmod(0o700)
    assert len(schema_checks) == 6


def test_a_memo_folder_that_is_a_file_is_no_error(tmp_path, schema_checks):
    path = _file(tmp_path)
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    memo = ValidatedFiles(blocker / "memo")
    open_task_set(path, validated=memo)
    open_task_set(path, validated=memo)
    assert len(schema_checks) == 6


def test_a_scoring_keeps_the_memo_in_the_user_cache_folder(
    tmp_path, executor, schema_checks, monkeypatch
):
    """Whatever the gold cache (a folder, or none with --no-cache), a file's bytes are
    validated once: the memo is the user cache folder's."""
    from score.inputs.validated_files import MEMO_FOLDER
    from score.scoring.run import ScoringOptions, run_scoring

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    path = _file(tmp_path, 2)
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        "".join(json.dumps({"task_id": f"t{i}", "sql": "SELECT 1130"}) + "\n" for i in range(2))
    )
    cache = tmp_path / "cache"
    for out in ("one", "two"):
        run_scoring(
            path,
            preds,
            tmp_path / out,
            executor,
            ScoringOptions(cache_dir=cache, with_priors=False),
        )
    assert schema_checks == ["t0", "t1"]
    assert len(list((tmp_path / "user-cache" / "sqlgold" / MEMO_FOLDER).iterdir())) == 1
    assert not (cache / MEMO_FOLDER).exists()
    run_scoring(
        path, preds, tmp_path / "three", executor, ScoringOptions(cache_dir=None, with_priors=False)
    )
    assert schema_checks == ["t0", "t1"]  # --no-cache: no gold cache, the same memo
