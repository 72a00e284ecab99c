"""``sqlgold publish`` given versions, names and card fields that try to leave the
release folder or change what the card says (issue 57, finding 18 and its attacks).
Every one is refused before anything is written; nothing appears outside --out."""

from __future__ import annotations

import shutil

import pytest

from tests.cli_run import one_line_error, sqlgold
from tests.paths import REPO

TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
REPORT = REPO / "data" / "benchmark" / "omop_report.json"


def _publish(omop_db, out, *args, tasks=TASKS):
    return sqlgold("publish", tasks, "--db", omop_db, "--out", out, *args)


@pytest.mark.parametrize(
    "version", ["1.0.0\n", "1.0.0\r", "../1.0.0", "1.0.0/../../x", " 1.0.0", "1.0.0-a/b", ""]
)
def test_a_version_is_matched_whole(omop_db, tmp_path, version):
    """Finding 18: --version $'1.0.0\\n' was accepted and made a folder '1.0.0\\n'."""
    done = _publish(omop_db, tmp_path / "rel", "--version", version)
    assert done.returncode == 2, done.stderr  # click's usage error: a bad option value
    assert "is not a semantic version" in done.stderr and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["omop\n", "..", ".hidden", "a b", "x\u202egnp"])
def test_a_task_file_name_that_is_no_release_name_is_refused(omop_db, tmp_path, name):
    """Finding 18: a task file name with a newline made a release name with one."""
    tasks = tmp_path / "in" / f"{name}_tasks.jsonl"
    tasks.parent.mkdir()
    shutil.copy(TASKS, tasks)
    shutil.copy(REPORT, tasks.with_name(f"{name}_report.json"))
    done = _publish(omop_db, tmp_path / "rel", "--version", "1.0.0", tasks=tasks)
    line = one_line_error(done, "as a release name")  # the newline shown as \n: one line
    assert line.startswith("error: [publish] ")
    assert not (tmp_path / "rel").exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--repo-id", 'org/name")\nimport os; os.system("x")  #'),
        ("--repo-id", "../../etc"),
        ("--push", "org/name/../../x"),
        ("--license", "mit\nconfigs: []"),
        ("--homepage", "https://x.org/>\n<script>alert(1)</script>"),
        ("--homepage", "javascript:alert(1)"),
        ("--pretty-name", "Title\n---\nlicense: other"),
        ("--pretty-name", "x\u202egnp.exe"),
    ],
)
def test_card_fields_that_would_change_the_card_are_refused(omop_db, tmp_path, option, value):
    done = _publish(omop_db, tmp_path / "rel", "--version", "1.0.0", option, value)
    one_line_error(done, f"[publish] {option} ")
    assert list(tmp_path.iterdir()) == []
