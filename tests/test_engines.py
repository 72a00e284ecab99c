"""Every command that takes --db, on each engine it names: a DuckDB file, PostgreSQL and
Spark Connect (the test suite's own servers, the embedded CDM loaded into each).

The issue: `db info --db sc://...` sent the URL to the PostgreSQL code ("missing '=' after
'sc://localhost:15777' in connection info string"), `verify --db` ran DuckDB SQL unchanged
on a server, and `grounding` and `prompt` did the same. Each command either works on the
engine or refuses it in one line naming what it supports (exit 2, before any work).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.cli.exit_codes import OK, USAGE
from score.inputs.task_file import task_file_text
from score.inputs.task_set import load_tasks
from tests.paths import PROJECT_SOURCE, REPO

TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
#: A few tasks that every engine runs as DuckDB does (no text order, no float formatting).
IDS = ("omop-001", "omop-002", "omop-003")


@pytest.fixture(scope="module", params=["duckdb", "postgres", "spark"])
def db(request, omop_db: Path) -> str:
    """The embedded CDM on one engine, as --db names it."""
    if request.param == "duckdb":
        return str(omop_db)
    if request.param == "postgres":
        return request.getfixturevalue("pg_cdm").reader_url
    return request.getfixturevalue("spark_url")


def sqlgold(*args) -> object:
    return CliRunner().invoke(main, [str(a) for a in args], prog_name="sqlgold")


def _engine(db: str) -> str:
    return db.split("://")[0] if "://" in db else "duckdb"


@pytest.fixture(scope="module")
def few(tmp_path_factory) -> dict[str, Path]:
    """A task file and a source file of a few tasks, and their reference answers."""
    folder = tmp_path_factory.mktemp("few")
    tasks = [t for t in load_tasks(TASKS) if t["id"] in IDS]
    (folder / "tasks.jsonl").write_text(task_file_text(tasks), encoding="utf-8")
    lines = [line for line in PROJECT_SOURCE.read_text(encoding="utf-8").splitlines()
             if json.loads(line)["id"] in IDS]  # fmt: skip
    (folder / "source.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with (folder / "preds.jsonl").open("w", encoding="utf-8") as f:
        for task in tasks:
            for language in task["questions"]:
                line = {"task_id": task["id"], "language": language, "sql": task["answer_sql"]}
                f.write(json.dumps(line) + "\n")
    return {"tasks": folder / "tasks.jsonl", "source": folder / "source.jsonl",
            "preds": folder / "preds.jsonl", "folder": folder}  # fmt: skip


def test_db_info_prints_the_same_fingerprint_on_every_engine(db, omop_db):
    done = sqlgold("db", "info", "--db", db)
    assert done.exit_code == OK, done.output
    (fingerprint,) = re.findall(r"^fingerprint  ([0-9a-f]{64})", done.output, re.MULTILINE)
    embedded = sqlgold("db", "info", "--db", omop_db)
    assert fingerprint in embedded.output
    assert "person" in done.output and "1,130" in done.output


def test_verify_checks_a_source_record_on_every_engine(db):
    done = sqlgold("verify", "--db", db, "--id", "omop-042", "--source", PROJECT_SOURCE)
    assert done.exit_code == OK, done.output
    assert "SAME RESULT" in done.output
    if _engine(db) != "duckdb":
        name = {"postgresql": "PostgreSQL", "sc": "Spark"}[_engine(db)]
        assert f"gold as run on {name}:" in done.output


def test_curate_keeps_the_same_tasks_on_every_engine(db, few, tmp_path):
    out = tmp_path / "tasks.jsonl"
    done = sqlgold("curate", few["source"], "--db", db, "--out", out, "-q",
                   "--against", few["tasks"])  # fmt: skip
    assert done.exit_code == OK, done.output
    kept = {json.loads(line)["id"] for line in out.read_text().splitlines()[1:]}
    assert kept == set(IDS)


def test_score_run_scores_the_reference_answers_right_on_every_engine(db, few, tmp_path):
    dialect = [] if _engine(db) == "duckdb" else ["--dialect", "duckdb"]
    done = sqlgold("score", "run", few["tasks"], few["preds"], "--out", tmp_path / "run",
                   "--split", "all", "--db", db, "--no-cache", "-q", *dialect)  # fmt: skip
    assert done.exit_code == OK, done.output
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["ex"] == 1.0
    check = json.loads((tmp_path / "run" / "run.json").read_text())["database_fingerprint_check"]
    assert check.startswith(("cached", "computed", "checked by change markers"))
    # the scoring made (or vouched for) the fingerprint: the next look is by markers only
    info = sqlgold("db", "info", "--db", db)
    assert info.exit_code == OK, info.output
    line = next(x for x in info.output.splitlines() if x.startswith("fingerprint"))
    assert ("(cached" if _engine(db) == "duckdb" else "(checked by change markers") in line


def test_prompt_describes_the_database_on_every_engine(db, few):
    done = sqlgold("prompt", "omop-001", "--tasks", few["tasks"], "--db", db)
    assert done.exit_code == OK, done.output
    assert "CREATE TABLE" in done.output and "person" in done.output


def test_generate_asks_a_model_on_every_engine(db, few, tmp_path):
    pytest.importorskip("openai", reason="the generate extra is not installed")
    from tests.score.generate.chat_server import ChatServer, Reply

    server = ChatServer(default=lambda question: Reply("```sql\nSELECT 1 AS n\n```")).start()
    try:
        out = tmp_path / "preds.jsonl"
        done = sqlgold("generate", few["tasks"], "--model", "m", "--base-url", server.url,
                       "--out", out, "--split", "all", "--db", db, "-q")  # fmt: skip
    finally:
        server.stop()
    assert done.exit_code == OK, done.output
    assert len(out.read_text().splitlines()) == sum(
        len(t["questions"]) for t in load_tasks(few["tasks"])
    )


@pytest.mark.parametrize("command", ["grounding", "publish"])
def test_a_command_that_needs_a_duckdb_file_refuses_a_server_in_one_line(db, few, command):
    args = {
        "grounding": ["grounding", "--tasks", few["tasks"], "--out", few["folder"] / "g"],
        "publish": ["publish", few["tasks"], "--version", "0.1.0", "--out", few["folder"] / "r"],
    }[command]
    if _engine(db) == "duckdb":
        return  # their DuckDB runs are tested with the commands themselves
    done = sqlgold(*args, "--db", db)
    assert done.exit_code == USAGE
    assert f"sqlgold {command} works on a DuckDB file only" in done.output
    password = re.search(r"://[^:/@]+:([^@]+)@", db)
    assert password is None or password.group(1) not in done.output  # never printed
    assert not (few["folder"] / ("g" if command == "grounding" else "r")).exists()
