"""A project's settings (sqlgold.toml, or [tool.sqlgold] in pyproject.toml) are every
command's defaults; an option overrides them; `sqlgold config` shows them and their source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from tests.task_factory import make_task, write_task_file


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def project(tmp_path, monkeypatch, omop_db) -> Path:
    """A benchmark's folder with its settings, the commands run from a folder below it."""
    (tmp_path / "sqlgold.toml").write_text(
        f'db = "{omop_db}"\nprofile = "set"\ntimeout = 7\nsplit = "all"\n', encoding="utf-8"
    )
    below = tmp_path / "runs"
    below.mkdir()
    monkeypatch.chdir(below)
    return tmp_path


def test_the_settings_are_every_command_s_defaults_and_an_option_overrides_them(project):
    tasks = write_task_file(project / "tasks.jsonl", [make_task("t1")])
    preds = project / "preds.jsonl"
    preds.write_text(json.dumps({"task_id": "t1", "sql": "SELECT 1130"}) + "\n")
    done = _run("score", "run", str(tasks), str(preds), "--out", "one", "-q", "--no-cache")
    assert done.exit_code == 0, done.output
    meta = json.loads((project / "runs" / "one" / "run.json").read_text())
    assert meta["profile"] == "set" and meta["settings"]["timeout_seconds"] == 7.0
    assert meta["split"]["name"] == "all"
    done = _run(
        "score",
        "run",
        str(tasks),
        str(preds),
        "--out",
        "two",
        "-q",
        "--no-cache",
        "--profile",
        "sqlgold",
        "--timeout",
        "3",
    )
    assert done.exit_code == 0, done.output
    meta = json.loads((project / "runs" / "two" / "run.json").read_text())
    assert meta["profile"] == "sqlgold" and meta["settings"]["timeout_seconds"] == 3.0


def test_config_shows_each_setting_and_where_it_came_from(project):
    done = _run("config", "--json")
    assert done.exit_code == 0, done.output
    found = json.loads(done.output)
    assert found["file"] == str(project / "sqlgold.toml")
    assert found["settings"]["profile"] == {"value": "set", "from": str(project / "sqlgold.toml")}
    assert found["settings"]["today"]["from"] == "default"
    text = _run("config").output
    assert "profile        set  [" in text and "sqlgold.toml]" in text


def test_pyproject_s_tool_table_is_read_and_a_relative_database_is_the_file_s(
    tmp_path, monkeypatch, omop_db
):
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "mine"\n\n[tool.sqlgold]\ndb = "cdm.duckdb"\njobs = 2\n'
    )
    (tmp_path / "deep" / "er").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "deep" / "er")
    found = json.loads(_run("config", "--json").output)
    assert found["settings"]["db"]["value"] == str(tmp_path / "cdm.duckdb")
    assert found["settings"]["jobs"] == {
        "value": 2,
        "from": f"{tmp_path / 'pyproject.toml'} [tool.sqlgold]",
    }


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("profle = 'set'\n", "'profle' is not a setting"),
        ("timeout = -1\n", "timeout = -1: a number of seconds above 0 is expected"),
        ("today = '31/12/2025'\n", "a date like 2026-01-01 is expected"),
        ("split = 'dev'\n", "one of test, train, all is expected"),
        ("db = \n", "not TOML"),
    ],
)
def test_a_wrong_setting_is_one_line_naming_the_file(tmp_path, monkeypatch, text, says):
    (tmp_path / "sqlgold.toml").write_text(text)
    monkeypatch.chdir(tmp_path)
    done = _run("score", "run", "--help")
    assert done.exit_code == 1
    assert done.output.startswith(f"error: [config] {tmp_path / 'sqlgold.toml'}: ")
    assert says in done.output and "Traceback" not in done.output
