"""`sqlgold suite build` outside a terminal (a CI log) says how it is getting on (issue
57, finding 6: it printed nothing for minutes, and its bar counted every candidate the
build may try as work to do, so its ETA was wrong)."""

from __future__ import annotations

from tests.cli_run import sqlgold
from tests.score.suite.made_suite import suite_tasks
from tests.task_factory import write_task_file


def test_suite_build_progress_reads_in_a_log(omop_db, tmp_path):
    tasks = write_task_file(tmp_path / "tasks.jsonl", suite_tasks())
    done = sqlgold("suite", "build", tasks, "--db", omop_db, "--out", tmp_path / "suite",
                   "--max-candidates", "60", "--max-databases", "2")  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()  # stderr is a pipe here, as in a CI job
    # three answerable tasks, two of them asking the same gold: two golds to run
    assert lines[0] == "suite golds and near misses: 1/2"
    assert "suite golds and near misses: 2/2" in lines
    candidates = [x for x in lines if x.startswith("suite candidates: ")]
    assert candidates and candidates[0].startswith("suite candidates: 1/60 (0 of at most 2 ")
    assert "near misses left: " in candidates[-1]
    quiet = sqlgold("suite", "build", tasks, "--db", omop_db, "--out", tmp_path / "suite",
                    "--max-candidates", "60", "--max-databases", "2", "-q")  # fmt: skip
    assert quiet.returncode == 0 and quiet.stderr == ""
