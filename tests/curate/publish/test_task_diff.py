"""``sqlgold diff``: tasks added, removed, changed (which fields) and moved between splits."""

from __future__ import annotations

import json

import click
import pytest
from click.testing import CliRunner

from curate.publish.cli import diff_command
from curate.publish.release import publish
from curate.publish.task_diff import TaskDiff, changed_fields, diff_tasks, render_markdown
from score.errors import SqlgoldError
from tests.task_records import (
    DATABASE_COLUMNS,
    answerable,
    sample_tasks,
    unanswerable,
    write_inputs,
)


def edited_tasks() -> list[dict]:
    """sample_tasks with one removed, one added and three edited."""
    tasks = {t["id"]: t for t in sample_tasks()}
    del tasks["sim-003"]
    tasks["sim-005"] = answerable("sim-005")
    tasks["cmp-001"]["questions"]["ko"] = "바뀐 질문"
    tasks["cmp-001"]["gold_sql"] = "SELECT 2"
    tasks["sim-002"]["features"]["join_count"] = 3
    tasks["sim-002"]["features"]["has_limit"] = True
    tasks["una-001"]["notes"] = "checked again"
    return sorted(tasks.values(), key=lambda t: t["id"])


def test_added_removed_and_changed_fields():
    diff = diff_tasks(sample_tasks(), edited_tasks())
    assert diff.added == ("sim-005",)
    assert diff.removed == ("sim-003",)
    assert diff.changed == {
        "cmp-001": ("gold_sql", "questions.ko"),
        "sim-002": ("features.has_limit", "features.join_count"),
        "una-001": ("notes",),
    }
    assert diff.moved == {}


def test_identical_sets_have_an_empty_diff_whatever_the_order():
    diff = diff_tasks(sample_tasks(), list(reversed(sample_tasks())))
    assert diff.is_empty
    assert render_markdown(diff, "a", "b") == "No task changed from a to b."


def test_an_absent_field_equals_null():
    with_null = answerable("q1", notes=None)
    without = {k: v for k, v in with_null.items() if k not in ("notes", "origin")}
    without_origin = {**with_null, "origin": None}
    assert changed_fields(with_null, without) == ("origin",)
    assert changed_fields(without_origin, without) == ()


def test_nested_fields_are_named_one_level_down():
    old = unanswerable("u1")
    new = {**old, "unanswerable_because": {"empty_tables": ["note", "specimen"]}}
    assert changed_fields(old, new) == (
        "unanswerable_because.empty_tables",
        "unanswerable_because.null_columns",
    )
    to_answerable = answerable("u1")
    fields = changed_fields(old, to_answerable)
    assert "gold_result" in fields and "gold_sql" in fields and "answerable" in fields
    assert "features.tables" in fields  # {} -> full features: each key named


def test_moves_between_splits_need_both_splits():
    old, new = sample_tasks(), sample_tasks()
    old_splits = {"train": ["cmp-001", "sim-001"], "test": ["sim-002"]}
    new_splits = {"train": ["sim-001"], "test": ["cmp-001", "sim-002"]}
    assert diff_tasks(old, new, old_splits=old_splits).moved == {}
    diff = diff_tasks(old, new, old_splits=old_splits, new_splits=new_splits)
    assert diff.moved == {"cmp-001": ("train", "test")}
    assert not diff.is_empty


def test_markdown_lists_each_kind_of_change():
    diff = diff_tasks(
        sample_tasks(),
        edited_tasks(),
        old_splits={"train": ["sim-001"], "test": []},
        new_splits={"train": [], "test": ["sim-001"]},
    )
    text = render_markdown(diff, "v0.1.0", "v0.2.0")
    assert text.splitlines() == [
        "Changes from v0.1.0 to v0.2.0: 1 added, 1 removed, 3 changed, 1 moved between splits.",
        "",
        "- Added: `sim-005`",
        "- Removed: `sim-003`",
        "- Changed:",
        "  - `cmp-001`: gold_sql, questions.ko",
        "  - `sim-002`: features.has_limit, features.join_count",
        "  - `una-001`: notes",
        "- Moved between splits:",
        "  - `sim-001`: train → test",
    ]


def test_to_dict_is_json_ready():
    diff = diff_tasks(sample_tasks(), edited_tasks())
    assert json.loads(json.dumps(diff.to_dict()))["changed"]["una-001"] == ["notes"]
    assert TaskDiff().to_dict() == {"added": [], "removed": [], "changed": {}, "moved": {}}


def test_duplicate_or_missing_ids_are_diff_errors():
    with pytest.raises(SqlgoldError, match=r"^\[diff\].*duplicate id on the new side"):
        diff_tasks([], [answerable("a"), answerable("a")])
    with pytest.raises(SqlgoldError, match=r"^\[diff\].*old side has no id"):
        diff_tasks([{"tier": "simple"}], [])


@pytest.fixture()
def cli():
    @click.group()
    def main() -> None:
        pass

    main.add_command(diff_command)
    return main


def test_cli_diff_of_two_task_files(tmp_path, cli):
    old = write_inputs(tmp_path / "old", sample_tasks())
    new = write_inputs(tmp_path / "new", edited_tasks())
    result = CliRunner().invoke(cli, ["diff", str(old), str(new)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Changes from {old} to {new}: 1 added, 1 removed, 3 changed.")
    as_json = CliRunner().invoke(cli, ["diff", str(old), str(new), "--json"])
    assert json.loads(as_json.output)["removed"] == ["sim-003"]


def test_cli_diff_of_two_releases_lists_moves(tmp_path, cli):
    releases = tmp_path / "releases"
    first = publish(
        write_inputs(tmp_path / "a", sample_tasks()),
        "0.1.0",
        releases,
        database_columns=DATABASE_COLUMNS,
    )
    second = publish(
        write_inputs(tmp_path / "b", edited_tasks()),
        "0.2.0",
        releases,
        database_columns=DATABASE_COLUMNS,
    )
    result = CliRunner().invoke(cli, ["diff", str(first.path), str(second.path), "--json"])
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    expected = diff_tasks(sample_tasks(), edited_tasks())
    assert (got["added"], got["removed"]) == (list(expected.added), list(expected.removed))
    assert got["changed"] == {k: list(v) for k, v in expected.changed.items()}
    old_split = first.manifest["split"]
    new_split = second.manifest["split"]
    for task_id, (was, now) in got["moved"].items():
        assert task_id in old_split[was] and task_id in new_split[now]
    text = CliRunner().invoke(cli, ["diff", str(first.path), str(second.path)]).output
    assert text.startswith("Changes from omop v0.1.0 to omop v0.2.0:")


def test_cli_diff_reports_a_bad_file_in_one_line(tmp_path, cli):
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["diff", str(bad), str(bad)])
    assert result.exit_code == 1
    assert result.output.startswith(f"error: [diff] {bad}:1: not JSON")
    assert "Traceback" not in result.output


def test_cli_diff_help(cli):
    result = CliRunner().invoke(cli, ["diff", "--help"])
    assert result.exit_code == 0 and "OLD and NEW are task files" in result.output
