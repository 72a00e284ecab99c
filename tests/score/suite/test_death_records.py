"""COUNT(person_id) and COUNT(DISTINCT person_id) on DEATH (issue 57, finding 12): the
suite judged them equivalent, leaning on "up to one record per person", which CDM 5.4
states as a convention but its DDL does not declare (5.3's did; All of Us keeps several
death records of a person).  Decided from the declared constraints: they differ, and a
variant with a person's second death record tells them apart."""

from __future__ import annotations

import json

from tests.cli_run import sqlgold
from tests.task_factory import make_task, write_task_file


def test_a_death_count_and_a_count_of_the_dead_are_told_apart(omop_db, tmp_path):
    gold = "SELECT COUNT(DISTINCT person_id) AS n FROM cdm.death"
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("deaths", gold, expect=[(142,)])])
    done = sqlgold("suite", "build", tasks, "--db", omop_db, "--out", tmp_path / "suite",
                   "--max-candidates", "200", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "0 more are equivalent under the CDM's constraints" in done.stdout
    (task,) = json.loads((tmp_path / "suite" / "report.json").read_text())["tasks"]
    assert "SELECT COUNT(person_id) AS n FROM cdm.death" in task["killed_by"]
