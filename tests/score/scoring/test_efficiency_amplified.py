"""--efficiency given predictions built to amplify its reruns (issue 57): a right answer
that takes a tenth of a second, timed 100 times (R-VES's default runs) against a 3 s
time limit.  Each right answer's timing is one request under one time limit, and its
rounds stop as soon as those left clearly overrun it, so the attack costs a round or
two per answer (at most one time limit), and the answer scores what a timeout scores
in BIRD (0), with the reason; an honest answer beside it is measured."""

from __future__ import annotations

import json

from tests.cli_run import results, sqlgold, write_jsonl
from tests.task_factory import make_task, write_task_file

#: right (every person counted), and a tenth of a second of work each run
AMPLIFIER = (
    "SELECT count(*) AS n FROM cdm.person WHERE (SELECT count(*) FROM cdm.measurement m, "
    "cdm.measurement q WHERE m.measurement_id % 997 = q.measurement_id % 991 "
    "AND m.value_as_number IS DISTINCT FROM q.value_as_number) >= 0"
)


def test_efficiency_reruns_of_a_slow_right_answer_stop_at_one_time_limit(omop_db, tmp_path):
    tasks = write_task_file(tmp_path / "t.jsonl", [make_task(f"a{i}") for i in range(3)])
    lines = [{"task_id": f"a{i}", "language": "en", "sql": AMPLIFIER} for i in range(2)]
    lines.append({"task_id": "a2", "language": "en", "sql": "SELECT count(*) AS n FROM person"})
    preds = write_jsonl(tmp_path / "p.jsonl", lines)
    done = sqlgold("score", "run", tasks, preds, "--db", omop_db, "--out", tmp_path / "run",
                   "--split", "all", "--efficiency", "rves", "--timeout", "3", "--no-cache",
                   "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = results(tmp_path / "run")
    for task in ("a0", "a1"):
        assert found[task]["outcome"] == "correct"  # once, it runs well within the limit
        measured = found[task]["efficiency"]
        assert measured["ratio"] is None and measured["error"].startswith("timeout: "), measured
        assert "100 timed rounds would take about" in measured["error"]  # stopped early
    assert found["a2"]["efficiency"]["ratio"] is not None  # the honest one is measured
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())["efficiency"]
    assert summary["runs"] == 100
