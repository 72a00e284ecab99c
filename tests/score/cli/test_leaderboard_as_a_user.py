"""``sqlgold score compare RUN... --out`` (issue 56): a leaderboard of runs scored on the
embedded database, each run a process of its own as a user runs it.  Its numbers are
checked against the runs' own summaries and results, its files for determinism, and the
refusals of runs that do not share their tasks; a test suite's TS beside EX."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.statistics.multiple_testing import holm_adjusted
from score.statistics.stats import mcnemar_p
from tests.cli_run import one_line_error, sqlgold, write_jsonl
from tests.score.suite.test_suite_scoring import PREDICTIONS, tasks_of, write_predictions
from tests.task_factory import make_task, write_task_file

RIGHT = "SELECT count(*) AS n FROM cdm.person"
TASKS = [f"t{i}" for i in range(1, 9)]

#: run -> the tasks it answers right (the others: a wrong count); half and half_too tie
RUNS = {
    "all": set(TASKS),
    "half": {"t1", "t2", "t3", "t4"},
    "half_too": {"t5", "t6", "t7", "t8"},
    "one": {"t1"},
}

LEADERBOARD = ["leaderboard.html", "leaderboard.json", "leaderboard.md"]


def _score(tasks: Path, name: str, right: set[str], root: Path, *extra) -> Path:
    wrong = f"SELECT {len(name)} AS n"
    preds = write_jsonl(
        root / f"{name}.jsonl",
        [{"task_id": t, "language": "en", "sql": RIGHT if t in right else wrong}
         for t in TASKS if t in {x["id"] for x in _tasks(tasks)}],
    )  # fmt: skip
    out = root / "runs" / name
    done = sqlgold("score", "run", tasks, preds, "--out", out, "--split", "all", "-q", *extra)
    assert done.returncode == 0, done.stderr
    return out


def _tasks(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()[1:] if line.strip()]


@pytest.fixture(scope="module")
def scored(omop_db, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("leaderboard")
    tasks = write_task_file(root / "tasks.jsonl", [make_task(t) for t in TASKS])
    db = ("--db", omop_db)
    return {name: _score(tasks, name, right, root, *db) for name, right in RUNS.items()}


def _answerable_right(run: Path) -> dict[str, bool]:
    lines = (run / "results.jsonl").read_text().splitlines()
    return {r["task_id"]: r["outcome"] == "correct" for r in map(json.loads, lines)}


def test_leaderboard_of_four_runs_agrees_with_their_summaries(scored, tmp_path):
    out = tmp_path / "board"
    runs = [scored[n] for n in ("one", "half_too", "all", "half")]  # any order
    done = sqlgold("score", "compare", *runs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.iterdir()) == LEADERBOARD  # no pairwise comparison
    for name in LEADERBOARD:
        assert f"written      {out / name}" in done.stdout
    shown = done.stdout.splitlines()
    assert shown[0].split() == ["rank", "run", "EX"]
    assert [line.split()[:2] for line in shown[1:5]] == [
        ["1", "all"], ["2", "half"], ["2", "half_too"], ["4", "one"]]  # fmt: skip
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["format"] == "sqlgold.leaderboard/1" and board["ts_note"]
    for row in board["runs"]:
        summary = json.loads((scored[row["name"]] / "summary.json").read_text())
        assert row["ex"] == summary["ex"] == len(RUNS[row["name"]]) / 8
        assert row["ex_ci"] == summary["ex_ci"]  # the same seed and resamples: the same draws
        assert row["n_answerable"] == summary["n_answerable"] == 8
        assert row["run"] == summary["run"]
    assert [r["ex_rank"] for r in board["runs"]] == [1, 2, 2, 4]
    assert len(board["pairs"]) == 6
    for pair in board["pairs"]:
        a, b = _answerable_right(scored[pair["a"]]), _answerable_right(scored[pair["b"]])
        test = pair["ex"]
        assert test["b"] == sum(a[t] and not b[t] for t in TASKS)
        assert test["c"] == sum(b[t] and not a[t] for t in TASKS)
        assert test["p_value"] == mcnemar_p(test["b"], test["c"])
    raw = [p["ex"]["p_value"] for p in board["pairs"]]
    assert [p["ex"]["p_holm"] for p in board["pairs"]] == holm_adjusted(raw)
    md = (out / "leaderboard.md").read_text()
    assert "| all | 8 | 8 | 1 | 1.000 | [1.000, 1.000] |" in md
    assert "TS: no run was scored with a test suite" in md


def test_the_same_runs_give_the_same_bytes(scored, tmp_path):
    runs = [scored[n] for n in RUNS]
    first, second = tmp_path / "first", tmp_path / "second"
    for out in (first, second, first):  # the third replaces the first's own files
        done = sqlgold("score", "compare", *runs, "--out", out)
        assert done.returncode == 0, done.stderr
    assert "(replaced the leaderboard written there before)" in done.stdout
    for name in LEADERBOARD:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name
    other = sqlgold("score", "compare", *runs, "--out", tmp_path / "seeded", "--seed", "3")
    assert other.returncode == 0, other.stderr
    seeded = json.loads((tmp_path / "seeded" / "leaderboard.json").read_text())
    assert seeded["bootstrap"]["seed"] == 3


def test_two_runs_write_their_comparison_and_their_leaderboard(scored, tmp_path):
    out = tmp_path / "two"
    done = sqlgold("score", "compare", scored["all"], scored["one"], "--out", out)
    assert done.returncode == 0, done.stderr
    assert "McNemar p" in done.stdout and f"written      {out}\n" in done.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted(
        ["chart.svg", "comparison.json", "report.html", "report.md", *LEADERBOARD])  # fmt: skip
    board = json.loads((out / "leaderboard.json").read_text())
    comparison = json.loads((out / "comparison.json").read_text())
    # every instance is answerable here: EX's McNemar is the comparison's
    assert (board["pairs"][0]["ex"]["b"], board["pairs"][0]["ex"]["c"]) == (
        comparison["b"], comparison["c"])  # fmt: skip


def test_runs_that_do_not_share_their_tasks_are_refused_naming_the_run(scored, omop_db, tmp_path):
    fewer = write_task_file(tmp_path / "fewer.jsonl", [make_task(t) for t in TASKS[:5]])
    odd = _score(fewer, "odd", {"t1"}, tmp_path, "--db", omop_db)
    runs = [scored["all"], scored["half"], odd]
    refused = sqlgold("score", "compare", *runs, "--out", tmp_path / "x")
    line = one_line_error(refused, "the runs differ in task set", str(odd), str(scored["all"]))
    assert "cannot share one report" in line
    assert not (tmp_path / "x").exists()
    usage = sqlgold("score", "compare", scored["all"], scored["half"], scored["one"])
    assert usage.returncode == 2 and "say where the leaderboard goes with --out" in usage.stderr
    alone = sqlgold("score", "compare", scored["all"], "--out", tmp_path / "y")
    assert alone.returncode == 2 and "two or more run folders" in alone.stderr
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    refused = sqlgold("score", "compare", *runs[:2], scored["one"], "--out", mine)
    one_line_error(refused, f"{mine}: holds 'notes.txt', which is not part of a leaderboard")


def test_ts_beside_ex_for_runs_scored_with_a_test_suite(omop_db, made_suite, tmp_path):
    tasks = tasks_of(made_suite)
    common = ["score", "run", tasks, "--db", omop_db, "--split", "all", "-q"]
    everywhere = {**PREDICTIONS, ("s-count", "en"): PREDICTIONS[("s-count", "ko")]}
    runs = {
        "shipped": (write_predictions(tmp_path / "p.jsonl"), True),
        "better": (write_predictions(tmp_path / "q.jsonl", everywhere), True),
        "plain": (write_predictions(tmp_path / "r.jsonl"), False),
    }
    for name, (preds, suite) in runs.items():
        extra = ["--suite", made_suite.folder] if suite else []
        done = sqlgold(*common[:3], preds, *common[3:], "--out", tmp_path / name, *extra)
        assert done.returncode == 0, done.stderr
    out = tmp_path / "board"
    done = sqlgold("score", "compare", *(tmp_path / n for n in runs), "--out", out)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == ["rank", "run", "EX", "TS"]
    board = json.loads((out / "leaderboard.json").read_text())
    rows = {r["name"]: r for r in board["runs"]}
    for name in ("shipped", "better"):
        summary = json.loads((tmp_path / name / "summary.json").read_text())
        assert rows[name]["ts"] == summary["ts"] and rows[name]["ts_ci"] == summary["ts_ci"]
        assert rows[name]["ex"] == summary["ex"]
    assert rows["better"]["ts"] > rows["shipped"]["ts"]
    assert (rows["better"]["ts_rank"], rows["shipped"]["ts_rank"]) == (1, 2)
    assert rows["plain"]["ts"] is None and rows["plain"]["ts_rank"] is None
    assert "TS only for the runs scored with the test suite" in board["ts_note"]
    tested = [p for p in board["pairs"] if "ts" in p]
    assert [(p["a"], p["b"]) for p in tested] in (
        [("better", "shipped")], [("shipped", "better")])  # fmt: skip
    md = (out / "leaderboard.md").read_text()
    plain_row = next(line for line in md.splitlines() if line.startswith("| plain |"))
    assert plain_row.endswith("| – | – | – |")  # no TS: a dash, never a zero


def test_the_api_writes_what_the_command_writes(scored, tmp_path):
    import score

    runs = [scored[n] for n in RUNS]
    board = score.rank_runs(runs, tmp_path / "api")
    assert isinstance(board, score.Leaderboard) and not board.replaced
    assert [r["name"] for r in board.runs] == ["all", "half", "half_too", "one"]
    assert len(board.pairs) == 6 and board.page == tmp_path / "api" / "leaderboard.html"
    done = sqlgold("score", "compare", *runs, "--out", tmp_path / "cli")
    assert done.returncode == 0, done.stderr
    for name in LEADERBOARD:
        assert (tmp_path / "api" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    two = score.compare_runs(runs[0], runs[1], tmp_path / "two", leaderboard=True)
    assert two.leaderboard is not None and len(two.leaderboard.pairs) == 1
    assert score.compare_runs(runs[0], runs[1], tmp_path / "plain").leaderboard is None
    assert not (tmp_path / "plain" / "leaderboard.json").exists()  # as before issue 56
    brittle = sqlgold("score", "compare", *runs[:3], "--out", tmp_path / "b", "--brittleness")
    assert brittle.returncode == 2 and "--brittleness compares two runs" in brittle.stderr
