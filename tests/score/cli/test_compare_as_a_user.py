"""``sqlgold score compare`` as a user runs it (issue 57, findings 7 and 15): the test
first in the report, a run scored with a test suite beside one without, and runs
bootstrapped with different ``--resamples``."""

from __future__ import annotations

import json

from tests.cli_run import sqlgold
from tests.score.suite.test_suite_scoring import tasks_of, write_predictions


def test_compare_reads_the_test_first_and_pairs_what_a_user_would(omop_db, made_suite, tmp_path):
    """Finding 15: runs scored with --resamples 100 and 200 ended compare in a ValueError
    traceback, after comparison.json was written.  Finding 7: the McNemar test sat at the
    end of report.md, and a run with a test suite could not be compared with one without
    ("the runs differ in test suite"), though comparing their EX is what a user wants."""
    preds = write_predictions(tmp_path / "p.jsonl")
    common = ["score", "run", tasks_of(made_suite), preds, "--db", omop_db, "--split", "all", "-q"]
    with_suite = sqlgold(*common, "--out", tmp_path / "a", "--suite", made_suite.folder,
                         "--resamples", "100")  # fmt: skip
    assert with_suite.returncode == 0, with_suite.stderr
    plain = sqlgold(*common, "--out", tmp_path / "b", "--resamples", "200")
    assert plain.returncode == 0, plain.stderr
    out = tmp_path / "ab"
    done = sqlgold("score", "compare", tmp_path / "a", tmp_path / "b", "--out", out)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "McNemar p" in done.stdout
    report = (out / "report.md").read_text()
    sections = [line for line in report.splitlines() if line.startswith("## ")]
    assert sections[0].startswith("## Paired comparison"), sections
    assert "exact McNemar" in report.split("## Headline")[0]
    assert "none (TS is compared only where both runs have a suite)" in report
    assert "summarised again from its results with 2,000 resamples" in report
    assert "it was scored with 100 (seed 0)" in report and "it was scored with 200" in report
    comparison = json.loads((out / "comparison.json").read_text())
    assert comparison["bootstrap"]["resamples"] == 2000
    assert "ts" not in comparison["scores"] and comparison["scores"]["ex"]["a"] is not None
    assert sorted(p.name for p in out.iterdir()) == [  # issue 56: and the two runs' leaderboard
        "chart.svg", "comparison.json", "leaderboard.html", "leaderboard.json",
        "leaderboard.md", "report.html", "report.md"]  # fmt: skip
    both = sqlgold("score", "report", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "r")
    assert both.returncode == 1 and "differ in test suite" in both.stderr  # one report: one suite
    assert "Traceback" not in both.stderr
