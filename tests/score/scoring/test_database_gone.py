"""A database that goes away mid-run (a Spark server whose SparkContext stopped) ends
the run with one error line naming it; no instance records it as its outcome, and
``--resume`` completes the run once the database is back."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from curate.cli import main
from score.errors import DatabaseError
from score.execution.processes.query_process import Worker
from tests.task_factory import make_task, write_task_file

GONE = "the Spark server's SparkContext has stopped"


def _outcomes(folder: Path) -> dict[str, str]:
    lines = (folder / "results.jsonl").read_text().splitlines()
    return {json.loads(x)["task_id"]: json.loads(x)["outcome"] for x in lines}


def test_a_database_gone_ends_the_run_and_resume_completes_it(omop_db, tmp_path, monkeypatch):
    tasks = [make_task(f"t{i}", f"SELECT {i} AS n", expect=((i,),)) for i in range(8)]
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    predictions = tmp_path / "predictions.jsonl"
    wrong = {3: "SELECT 33 AS n"}
    predictions.write_text(
        "".join(
            json.dumps({"task_id": f"t{i}", "sql": wrong.get(i, f"SELECT {i} AS n")}) + "\n"
            for i in range(8)
        )
    )
    out = tmp_path / "run"
    args = ["score", "run", str(tasks_path), str(predictions), "--out", str(out)]
    args += ["--db", str(omop_db), "--no-cache", "--split", "all", "-q"]

    replies = {"n": 0}
    receive = Worker.receive

    def going(self, kill_after):
        replies["n"] += 1
        if replies["n"] > 6:  # the server is gone from here on
            raise DatabaseError(GONE, path="sc://cdm-server:15002")
        return receive(self, kill_after)

    monkeypatch.setattr(Worker, "receive", going)
    gone = CliRunner().invoke(main, args)
    assert gone.exit_code == 1, gone.output
    assert f"[database] sc://cdm-server:15002: {GONE}" in gone.output
    assert not (out / "summary.json").exists()
    before = _outcomes(out)
    assert len(before) < 8
    assert set(before.values()) <= {"correct", "mismatch"}  # none blamed on the answer

    monkeypatch.setattr(Worker, "receive", receive)  # the server is back
    resumed = CliRunner().invoke(main, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output
    after = _outcomes(out)
    assert after == {f"t{i}": "mismatch" if i in wrong else "correct" for i in range(8)}
