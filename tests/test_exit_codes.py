"""Every command follows the README's exit-code table: 0 done, 1 a one-line error, 2 a
usage error (click's), 3 checked and found different or dropped.

Each command is run into every code it can give, on real inputs: the embedded database,
a copy of it changed after it was built, curated tasks, scored runs.  The error cases are
the ones a new user met: text that is not UTF-8, outputs that cannot be written, empty
inputs, paths that are not files.
"""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.cli.exit_codes import ERROR, FOUND_DIFFERENT, OK, USAGE
from tests.paths import REPO
from tests.task_factory import make_task, write_task_file
from tests.test_cli import COMMANDS

GOOD = {
    "format": "sqlgold.source/1",
    "id": "persons",
    "question": "How many persons?",
    "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
    "gold_dialect": "tsql",
    "answer_sql": "SELECT count(person_id) AS n FROM cdm.person",
    "answer_dialect": "duckdb",
}


class Inputs:
    """Files every case is built from, made once for the module."""

    def __init__(self, root: Path, omop_db: Path, changed_db: Path) -> None:
        self.root, self.db, self.changed = root, omop_db, changed_db
        (root / "plain").write_text("a regular file")
        self.under_a_file = root / "plain" / "out"
        self.source = root / "good_source.jsonl"
        self.source.write_text(json.dumps(GOOD) + "\n")
        self.bad_source = root / "bad_source.jsonl"
        self.bad_source.write_text(json.dumps(GOOD) + "\n{oops\n")
        self.empty = root / "empty.jsonl"
        self.empty.write_text("")
        self.tasks = write_task_file(root / "t_tasks.jsonl", [make_task("a"), make_task("b")])
        self.not_utf8 = root / "latin1_tasks.jsonl"
        self.not_utf8.write_bytes(self.tasks.read_bytes().replace(b"a question", b"\xe0 question"))
        self.preds = root / "preds.jsonl"
        self.preds.write_text(
            '{"task_id": "a", "sql": "SELECT 1130"}\n{"task_id": "b", "sql": "SELECT 1"}\n'
        )
        self.preds_not_utf8 = root / "preds_latin1.jsonl"
        self.preds_not_utf8.write_bytes(b'{"task_id": "a", "sql": "SELECT \'\xe9\'"}\n')
        self.run_a = root / "run_a"
        self.run_b = root / "run_b"
        self.run_spider = root / "run_spider"
        self.bad_config = root / "bad_config"
        self.bad_config.mkdir()
        (self.bad_config / "sqlgold.toml").write_text("timeout = 'soon'\n")

    def sqlgold(self, *args: str, env: dict[str, str] | None = None):
        return CliRunner().invoke(main, [str(a) for a in args], env=env)

    def sqlgold_in(self, folder: Path, *args: str):
        """The command run from ``folder`` (the settings file found from there)."""
        with contextlib.chdir(folder):
            return self.sqlgold(*args)

    def score(self, out: Path, *extra: str):
        return self.sqlgold(
            "score", "run", self.tasks, self.preds, "--out", out, "--db", self.db,
            "--no-cache", "--split", "all", "-q", *extra,
        )  # fmt: skip


@pytest.fixture(scope="module")
def inputs(omop_db, changed_db, tmp_path_factory) -> Inputs:
    found = Inputs(tmp_path_factory.mktemp("exit"), omop_db, changed_db)
    for out, extra in (
        (found.run_a, ()),
        (found.run_b, ()),
        (found.run_spider, ("--profile", "spider-ts")),
    ):
        assert found.score(out, *extra).exit_code == OK
    return found


def _curated(i: Inputs) -> Path:
    out = i.root / "pub" / "omop_tasks.jsonl"
    if not out.exists():
        assert i.sqlgold("curate", i.source, "--db", i.db, "--out", out, "-q").exit_code == OK
    return out


#: command -> exit code -> a function of the inputs that runs the command into that code.
CASES = {
    "db path": {
        OK: lambda i: i.sqlgold("db", "path"),
        # the user cache folder under a regular file: the database cannot be built there
        ERROR: lambda i: i.sqlgold("db", "path", env={"XDG_CACHE_HOME": str(i.root / "plain")}),
    },
    "config": {
        OK: lambda i: i.sqlgold("config"),
        ERROR: lambda i: i.sqlgold_in(i.bad_config, "config"),
    },
    "db build": {
        OK: lambda i: i.sqlgold("db", "build", "--out", i.root / "built.duckdb", "-q"),
        ERROR: lambda i: i.sqlgold("db", "build", "--out", i.under_a_file / "x.duckdb", "-q"),
    },
    "db load": {
        # (a load into a real server: tests/curate/database/test_load.py)
        ERROR: lambda i: i.sqlgold(
            "db", "load", "postgresql://nobody@127.0.0.1:9/x", "--from", i.db, "-q"
        ),
    },
    "db info": {
        OK: lambda i: i.sqlgold("db", "info", "--db", i.db),
        ERROR: lambda i: i.sqlgold("db", "info", "--db", i.root / "missing.duckdb"),
        FOUND_DIFFERENT: lambda i: i.sqlgold("db", "info", "--db", i.changed),
    },
    "curate": {
        OK: lambda i: i.sqlgold(
            "curate", i.source, "--db", i.db, "--out", i.root / "c0.jsonl", "-q"
        ),
        ERROR: lambda i: i.sqlgold("curate", i.empty, "--db", i.db, "--out", i.root / "c1.jsonl"),
        FOUND_DIFFERENT: lambda i: i.sqlgold(
            "curate", i.bad_source, "--db", i.db, "--out", i.root / "c3.jsonl", "--strict", "-q"
        ),
    },
    "verify": {
        OK: lambda i: i.sqlgold(
            "verify", "--db", i.db, "--gold", "SELECT 1 AS n", "--answer", "SELECT 1"
        ),
        ERROR: lambda i: i.sqlgold(
            "verify", "--db", i.db, "--gold", "missing.sql", "--answer", "SELECT 1"
        ),
        FOUND_DIFFERENT: lambda i: i.sqlgold(
            "verify", "--db", i.db, "--gold", "SELECT 1 AS n", "--answer", "SELECT 2"
        ),
    },
    "grounding": {
        OK: lambda i: i.sqlgold("grounding", "--db", i.db, "--out", i.root / "grounding"),
        ERROR: lambda i: i.sqlgold("grounding", "--db", i.db, "--out", i.under_a_file),
        FOUND_DIFFERENT: lambda i: i.sqlgold(
            "grounding", "--db", i.db, "--out", i.root / "no-docs", "--check"
        ),
    },
    "publish": {
        OK: lambda i: i.sqlgold(
            "publish", _curated(i), "--version", "0.1.0", "--db", i.db, "--out", i.root / "rel"
        ),
        ERROR: lambda i: i.sqlgold(
            "publish", i.not_utf8, "--version", "0.1.0", "--db", i.db, "--out", i.root / "rel1"
        ),
        # the issue: a version that is not X.Y.Z exited 1 where a bad value is a usage error
        USAGE: lambda i: i.sqlgold(
            "publish", _curated(i), "--version", "1.0", "--db", i.db, "--out", i.root / "rel2"
        ),
    },
    "prompt": {
        OK: lambda i: i.sqlgold(
            "prompt", "omop-001", "--tasks", REPO / "data/benchmark/omop_tasks.jsonl", "--db", i.db
        ),
        ERROR: lambda i: i.sqlgold("prompt", "no-such-task", "--tasks", i.tasks, "--db", i.db),
    },
    "generate": {
        # (a run against a real endpoint: tests/score/generate)
        ERROR: lambda i: i.sqlgold(
            "generate",
            i.not_utf8,
            "--model",
            "m",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--out",
            i.root / "g.jsonl",
            "--db",
            i.db,
            "-q",
        ),  # fmt: skip
    },
    "diff": {
        OK: lambda i: i.sqlgold("diff", i.tasks, i.tasks),
        ERROR: lambda i: i.sqlgold("diff", i.tasks, i.not_utf8),
    },
    "score run": {
        OK: lambda i: i.score(i.root / "s0"),
        ERROR: lambda i: i.sqlgold(
            "score", "run", i.not_utf8, i.preds, "--out", i.root / "s1", "--db", i.db, "-q"
        ),
        FOUND_DIFFERENT: lambda i: i.sqlgold(
            "score",
            "run",
            i.tasks,
            i.preds,
            "--out",
            i.root / "s3",
            "--db",
            i.changed,
            "--no-cache",
            "--split",
            "all",
            "-q",
        ),  # fmt: skip
    },
    "score report": {
        OK: lambda i: i.sqlgold("score", "report", i.run_a, "--out", i.root / "rep"),
        ERROR: lambda i: i.sqlgold("score", "report", i.run_a, "--out", i.under_a_file),
    },
    "suite build": {
        OK: lambda i: i.sqlgold(
            "suite",
            "build",
            i.tasks,
            "--db",
            i.db,
            "--out",
            i.root / "suite",
            "--max-candidates",
            "2",
            "-q",
        ),  # fmt: skip
        ERROR: lambda i: i.sqlgold(
            "suite", "build", i.tasks, "--db", i.db, "--out", i.under_a_file, "-q"
        ),
    },
    "score compare": {
        OK: lambda i: i.sqlgold("score", "compare", i.run_a, i.run_b, "--out", i.root / "cmp"),
        ERROR: lambda i: i.sqlgold(
            "score", "compare", i.run_a, i.run_spider, "--out", i.root / "x"
        ),
    },
}

LEAVES = [" ".join(c) for c in COMMANDS if " ".join(c) not in ("db", "score", "suite")]


def _exit_code_table(path) -> list[str]:
    """The rows of the exit-code table in the file at ``path``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index("| code | meaning | commands |")
    table = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        table.append(line)
    return table


def _readme_row(code: int) -> str:
    """The row of ``code`` in the README's exit-code table."""
    (row,) = [
        line for line in _exit_code_table(REPO / "README.md") if line.startswith(f"| {code} | ")
    ]
    return row


def test_the_commands_page_shows_the_readmes_exit_code_table() -> None:
    page = REPO / "docs" / "reference" / "make.md"
    assert _exit_code_table(page) == _exit_code_table(REPO / "README.md")


def test_every_command_has_a_case_for_every_code_the_readme_gives_it():
    assert sorted(CASES) == sorted(LEAVES)
    for code in (OK, ERROR, USAGE):
        assert _readme_row(code).endswith("| every command |")
    found_different = re.findall(
        r"`([a-z ]+?)(?: --[a-z]+)?`", _readme_row(FOUND_DIFFERENT).split("|")[3]
    )
    assert sorted(found_different) == sorted(
        c for c, codes in CASES.items() if FOUND_DIFFERENT in codes
    )


@pytest.mark.parametrize(
    ("command", "code"),
    [(c, code) for c, codes in CASES.items() for code in codes],
    ids=lambda v: str(v),
)
def test_each_command_exits_with_the_documented_code(inputs, command, code):
    result = CASES[command][code](inputs)
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    if code == ERROR:
        errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and re.match(r"error: \[[a-z]+\] ", errors[0]), result.output


@pytest.mark.parametrize("command", LEAVES)
def test_a_usage_error_is_clicks_code_2(command):
    result = CliRunner().invoke(main, [*command.split(), "--no-such-option"])
    assert result.exit_code == USAGE
    assert "No such option" in result.output


# -- what the error cases say ----------------------------------------------------------


def test_text_that_is_not_utf8_names_the_file_and_line(inputs):
    for result in (CASES["score run"][ERROR](inputs), CASES["diff"][ERROR](inputs)):
        assert f"{inputs.not_utf8}:2: not UTF-8 text (byte 0xe0" in result.output
    publish = CASES["publish"][ERROR](inputs)
    assert "not UTF-8 text" in publish.output
    preds = inputs.sqlgold(
        "score", "run", inputs.tasks, inputs.preds_not_utf8, "--out", inputs.root / "u",
        "--db", inputs.db, "-q",
    )  # fmt: skip
    assert preds.exit_code == ERROR
    assert "line 1: not UTF-8 text (byte 0xe9" in preds.output


@pytest.mark.parametrize("command", ["score run", "score report", "score compare", "publish"])
def test_an_out_under_a_regular_file_or_in_proc_is_one_line(inputs, command):
    """The issue: a 36-line traceback from score run/report/compare and publish."""
    base = {
        "score run": ["score", "run", inputs.tasks, inputs.preds, "--db", inputs.db, "-q"],
        "score report": ["score", "report", inputs.run_a],
        "score compare": ["score", "compare", inputs.run_a, inputs.run_b],
        "publish": ["publish", _curated(inputs), "--version", "0.2.0", "--db", inputs.db],
    }[command]
    for out in (inputs.under_a_file, Path("/proc/sqlgold-out")):
        result = inputs.sqlgold(*base, "--out", out)
        assert result.exit_code == ERROR, result.output
        assert result.output.count("\n") == 1 and str(out) in result.output, result.output


def test_compare_says_what_differs(inputs):
    """The issue: refusing two runs did not say whether database, tasks or profile differ."""
    result = CASES["score compare"][ERROR](inputs)
    assert "the runs differ in comparator profile (A " in result.output
    assert ": sqlgold, B " in result.output and ": spider-ts)" in result.output
    assert "database" not in result.output.split("differ in")[1].split(";")[0]
