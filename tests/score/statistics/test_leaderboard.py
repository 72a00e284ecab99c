"""score.statistics.leaderboard and score.report.leaderboard_markdown: the table of runs
(scores, intervals, ranks) and the pairwise tests, checked against counts made by hand,
against each run's own summary, and against McNemar and Holm computed apart."""

from __future__ import annotations

import pytest

from score.report.leaderboard_markdown import leaderboard_lines, render_leaderboard
from score.statistics.leaderboard import (
    LEADERBOARD_FORMAT,
    align_instances,
    build_leaderboard,
    run_names,
)
from score.statistics.metrics import record
from score.statistics.multiple_testing import holm_adjusted
from score.statistics.stats import mcnemar_p
from score.statistics.summary import summarize


def bilingual_run(right: set[int], n: int = 20, *, run: str, unanswerable: int = 2, **kw):
    """Questions q00.. in en and ko: q<i> right in both languages when i is in ``right``;
    the last ``unanswerable`` questions are unanswerable and abstained on."""
    recs = []
    for i in range(n):
        for lang in ("en", "ko"):
            if i >= n - unanswerable:
                recs.append(record(f"q{i:02}", "abstained", language=lang, answerable=False,
                                   run=run, **kw))  # fmt: skip
            else:
                outcome = "correct" if i in right else "mismatch"
                recs.append(record(f"q{i:02}", outcome, language=lang, run=run, **kw))
    return recs


# 18 answerable questions (36 instances): A right on 0..15, B and C on 0..9 (a tie),
# D on 10..17
RUNS = {
    "A": set(range(16)),
    "B": set(range(10)),
    "C": set(range(10)),
    "D": set(range(10, 18)),
}


@pytest.fixture(scope="module")
def board():
    runs = [bilingual_run(right, run=name) for name, right in RUNS.items()]
    return build_leaderboard(runs, list(RUNS), resamples=500, seed=7)


def test_scores_ranks_and_order(board):
    rows = {r["name"]: r for r in board["runs"]}
    assert board["format"] == LEADERBOARD_FORMAT
    assert [r["name"] for r in board["runs"]] == ["A", "B", "C", "D"]  # by EX rank, then name
    assert rows["A"]["ex"] == 32 / 36 and rows["B"]["ex"] == 20 / 36 and rows["D"]["ex"] == 16 / 36
    assert [rows[n]["ex_rank"] for n in "ABCD"] == [1, 2, 2, 4]  # B and C tie: both 2
    assert all(r["n_tasks"] == 20 and r["n_instances"] == 40 for r in rows.values())
    assert all(r["n_answerable"] == 36 for r in rows.values())


def test_intervals_are_each_runs_own_summary_intervals(board):
    for name, right in RUNS.items():
        alone = summarize(bilingual_run(right, run=name), seed=7, resamples=500)
        row = next(r for r in board["runs"] if r["name"] == name)
        assert row["ex"] == alone["ex"]
        assert row["ex_ci"] == alone["ex_ci"]


def test_every_pair_is_tested_and_holm_corrected(board):
    pairs = {(p["a"], p["b"]): p["ex"] for p in board["pairs"]}
    assert list(pairs) == [("A", "B"), ("A", "C"), ("A", "D"), ("B", "C"), ("B", "D"),
                           ("C", "D")]  # fmt: skip
    # counted by hand over instances (two languages per question)
    assert (pairs["A", "B"]["b"], pairs["A", "B"]["c"]) == (12, 0)  # q10..q15
    assert (pairs["B", "C"]["b"], pairs["B", "C"]["c"]) == (0, 0)
    assert (pairs["A", "D"]["b"], pairs["A", "D"]["c"]) == (20, 4)  # q0..q9 / q16, q17
    assert (pairs["B", "D"]["b"], pairs["B", "D"]["c"]) == (20, 16)
    for test in pairs.values():
        assert test["p_value"] == mcnemar_p(test["b"], test["c"])
        assert test["n"] == 36
    raw = [t["p_value"] for t in pairs.values()]
    assert [t["p_holm"] for t in pairs.values()] == holm_adjusted(raw)
    assert [t["differs"] for t in pairs.values()] == [p <= 0.05 for p in holm_adjusted(raw)]
    assert pairs["B", "C"]["p_value"] == 1.0 and not pairs["B", "C"]["differs"]
    assert pairs["A", "B"]["diff"] == pytest.approx(12 / 36)
    low, high = pairs["A", "B"]["diff_ci"]
    assert 0 < low <= 12 / 36 <= high


def test_without_a_suite_ts_is_said_to_be_absent_not_zero(board):
    assert list(board["scores"]) == ["ex"]
    assert "no run was scored with a test suite" in board["ts_note"]
    assert all("ts" not in r and "ts_rank" not in r for r in board["runs"])
    text = render_leaderboard(board, {"database": "db"})
    assert "TS: no run was scored with a test suite" in text and "| TS" not in text


def _suite_run(right_base: set[int], right_suite: set[int], run: str):
    recs = bilingual_run(right_base, run=run)
    for r in recs:
        i = int(r["task_id"][1:])
        if r["answerable"]:
            r["base_correct"] = i in right_base
            r["outcome"] = "correct" if i in right_suite else "mismatch"
        r["suite"] = {"correct": r["outcome"] == "correct"}
    return recs


def test_ts_beside_ex_with_its_own_ranks_and_tests():
    suite = {"suite": {"manifest_sha256": "s1" * 32, "path": "suite"}}
    runs = [
        _suite_run(set(range(12)), set(range(6)), "x"),  # EX 24/36, TS 12/36
        _suite_run(set(range(8)), set(range(8)), "y"),  # EX 16/36, TS 16/36
    ]
    board = build_leaderboard(runs, ["x", "y"], metas=[suite, suite], resamples=200)
    x, y = board["runs"]
    assert (x["name"], x["ex"], x["ts"]) == ("x", 24 / 36, 12 / 36)
    assert (x["ex_rank"], x["ts_rank"], y["ex_rank"], y["ts_rank"]) == (1, 2, 2, 1)
    assert board["ts_note"] is None and list(board["scores"]) == ["ex", "ts"]
    pair = board["pairs"][0]
    assert (pair["ex"]["b"], pair["ex"]["c"]) == (8, 0)  # right on the base: q8..q11
    assert (pair["ts"]["b"], pair["ts"]["c"]) == (0, 4)  # right on every variant: q6, q7
    assert "| x | 20 | 36 | 1 | 0.667 | " in render_leaderboard(board, {})


def test_ts_only_where_a_run_has_the_suite_and_none_across_different_suites():
    plain = bilingual_run(set(range(5)), run="p")
    with_suite = _suite_run(set(range(10)), set(range(9)), "s")
    meta = {"suite": {"manifest_sha256": "a" * 64, "path": "suite"}}
    board = build_leaderboard([plain, with_suite], ["p", "s"], metas=[{}, meta], resamples=50)
    rows = {r["name"]: r for r in board["runs"]}
    assert rows["p"]["ts"] is None and rows["p"]["ts_rank"] is None and rows["p"]["ts_ci"] is None
    assert rows["s"]["ts"] == 18 / 36 and rows["s"]["ts_rank"] == 1
    assert "TS only for the runs scored with the test suite" in board["ts_note"]
    assert "ts" not in board["pairs"][0]  # no pair to test on TS
    other = {"suite": {"manifest_sha256": "b" * 64, "path": "other"}}
    again = build_leaderboard([with_suite, with_suite], ["s", "t"], metas=[meta, other],
                              resamples=50)  # fmt: skip
    assert list(again["scores"]) == ["ex"] and "different test suites" in again["ts_note"]


def test_runs_on_other_instances_are_refused_naming_the_run():
    a = bilingual_run({1}, run="a")
    b = bilingual_run({1}, run="b")[:-1]
    with pytest.raises(ValueError, match=r"run b holds different instances from run a: 0 not"):
        build_leaderboard([a, a, b], ["a", "a2", "b"], resamples=10)
    flipped = bilingual_run({1}, run="c")
    flipped[0]["tier"] = "compositional"
    with pytest.raises(ValueError, match=r"tier is 'simple' in run a, 'compositional' in run c"):
        build_leaderboard([a, flipped], ["a", "c"], resamples=10)
    with pytest.raises(ValueError, match="two or more runs"):
        build_leaderboard([a], ["a"], resamples=10)


def test_an_instance_with_a_gold_error_in_any_run_leaves_every_run():
    a = bilingual_run({0, 1}, run="a")
    b = bilingual_run({0, 1}, run="b")
    b[0]["outcome"] = "gold_error"  # q00 en
    aligned, excluded = align_instances([a, b], ["a", "b"])
    assert excluded == 1 and all(len(recs) == 39 for recs in aligned)
    board = build_leaderboard([a, b], ["a", "b"], resamples=10)
    assert board["n_gold_error_excluded"] == 1
    assert board["runs"][0]["ex"] == board["runs"][1]["ex"] == 3 / 35


def test_names_and_output_are_deterministic(board):
    assert run_names(["r/m", "s/m", "t/m/"]) == ["m", "m (2)", "m (3)"]
    runs = [bilingual_run(right, run=name) for name, right in RUNS.items()]
    shuffled = [list(reversed(recs)) for recs in runs]  # record order does not matter
    again = build_leaderboard(shuffled, list(RUNS), resamples=500, seed=7)
    assert again == board
    assert render_leaderboard(again, {"database": "db"}) == render_leaderboard(
        board, {"database": "db"}
    )


def test_markdown_and_lines_show_every_run_and_pair(board):
    text = render_leaderboard(board, {"database": "db"})
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert len(table) == 1 + 4 + 1 + 6  # runs' header, runs, pairs' header, pairs
    assert "| B | 20 | 36 | 2 | 0.556 | [" in text and "| C | 20 | 36 | 2 | 0.556 | [" in text
    assert "standard competition ranking (1, 2, 2, 4)" in text
    lines = leaderboard_lines(board)
    assert lines[1].startswith("1     A    0.889 [") and lines[4].startswith("4     D")
    assert lines[-1].startswith("EX: ") and "of 6 pair(s) differ at 0.05" in lines[-1]
