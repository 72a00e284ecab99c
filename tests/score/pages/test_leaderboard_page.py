"""The leaderboard page (``score compare RUN... --out``) in headless Chromium: it loads
with no error and no request, its table holds one row per run in rank order, sorts, opens
a run to its pairwise tests, reads with scripts off; and the leaderboard of TEXT-TO-OMOP's
five published result files, scored on the embedded database as the tutorial scores
them, renders the same way (skipped without ../shared)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from score.pages.leaderboard_page import leaderboard_page
from score.statistics.leaderboard import build_leaderboard
from score.statistics.metrics import record
from tests.cli_run import sqlgold
from tests.score.pages.browser_page import DISTINCT_COLOURS, open_page

#: run -> questions (of 30, two languages each) it answers right; two runs tie
RIGHT = {"alpha": 27, "beta": 18, "gamma": 18, "delta": 9, "<b>eps</b>": 3}


def _run(name: str, right: int) -> list[dict]:
    return [
        record(f"q{i:02}", "correct" if i < right else "mismatch", language=lang, run=name)
        for i in range(30)
        for lang in ("en", "ko")
    ]


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    board = build_leaderboard([_run(n, k) for n, k in RIGHT.items()], list(RIGHT), resamples=200)
    path = tmp_path_factory.mktemp("board") / "leaderboard.html"
    meta = {"database": "made-up.duckdb", "task_set": "made-up", "comparator_profile": "sqlgold"}
    path.write_text(leaderboard_page(board, meta), encoding="utf-8")
    return path, board


def _colours(opened: Any) -> int:
    import base64

    png = opened.page.screenshot(full_page=False)
    return opened.page.evaluate(DISTINCT_COLOURS, base64.b64encode(png).decode("ascii"))


def test_one_row_per_run_in_rank_order(browser: Any, page) -> None:
    path, board = page
    opened = open_page(browser, path)
    assert opened.errors == [] and opened.requests == []
    assert opened.visible_ids() == ["alpha", "beta", "gamma", "delta", "<b>eps</b>"]
    assert opened.column(2) == ["1", "2", "2", "4", "5"]  # rank EX: the tie shares 2
    assert opened.column(3) == [f"{r['ex']:.3f}" for r in board["runs"]]
    assert opened.page.locator("b").count() == 0  # a run's name is text, never markup
    assert _colours(opened) > 20


def test_sorting_and_opening_a_run(browser: Any, page) -> None:
    path, _ = page
    opened = open_page(browser, path)
    opened.page.get_by_role("button", name="EX", exact=True).click()  # ascending
    assert opened.visible_ids() == ["<b>eps</b>", "delta", "beta", "gamma", "alpha"]
    opened.page.locator('#rows tr[data-id="delta"] button').click()
    detail = opened.page.locator("#detail")
    detail.wait_for(state="visible")
    text = detail.inner_text()
    assert "PAIRWISE TESTS" in text.upper()
    assert detail.locator("table.result tbody tr").count() == 4  # delta against each other
    assert opened.errors == []


def test_the_summary_reads_with_scripts_off(browser: Any, page) -> None:
    path, board = page
    opened = open_page(browser, path, java_script_enabled=False)
    text = opened.page.inner_text("body")
    assert "Leaderboard" in text and "Pairwise tests" in text and "Holm" in text
    rows = opened.page.locator("section").first.locator("table.plain tbody tr")
    assert rows.count() == len(board["runs"])
    assert opened.page.locator("section").nth(1).locator("table.plain tbody tr").count() == 10
    assert opened.requests == []


#: run folder -> TEXT-TO-OMOP's result file, as the tutorial names them
TEXT2OMOP_RUNS = {
    "lora_312": "results_lora_checkpoint-312.jsonl",
    "lora_150": "results_lora_checkpoint-150.jsonl",
    "llama3_base": "results_llama3_base.jsonl",
    "mistral_7b": "results_mistral_7b_instruct_v0_3.jsonl",
    "natural_sql_7b": "results_natural_sql_7b.jsonl",
}


def test_the_text2omop_leaderboard_renders(browser: Any, shared_dir, omop_db, tmp_path) -> None:
    corpus = shared_dir / "corpora" / "text2omop"
    if not (corpus / "results").is_dir():
        pytest.skip("../shared/corpora/text2omop/results is not present")
    (tmp_path / "text2omop").mkdir()
    shutil.copy(corpus / "test.jsonl", tmp_path / "text2omop" / "test.jsonl")
    (tmp_path / "sqlgold.toml").write_text('today = "2026-01-01"\nprofile = "text2omop"\n')
    db = ("--db", str(omop_db))
    curated = sqlgold(
        "curate", "text2omop/test.jsonl", "--format", "text2omop", "-q", *db,
        "--out", "tasks.jsonl", "--min-rows", "0", "--allow-all-zero", "--allow-ties",
        "--allow-unordered-limit", "--allow-window-ties", "--allow-unresolved-semantics",
        cwd=tmp_path,
    )  # fmt: skip
    assert curated.returncode == 0, curated.stderr
    for name, file in TEXT2OMOP_RUNS.items():
        done = sqlgold("score", "run", "tasks.jsonl", corpus / "results" / file,
                       "--out", f"runs/{name}", "-q", *db, cwd=tmp_path)  # fmt: skip
        assert done.returncode == 0, done.stderr
    done = sqlgold("score", "compare", *(f"runs/{n}" for n in TEXT2OMOP_RUNS),
                   "--out", "leaderboard", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    board = json.loads((tmp_path / "leaderboard" / "leaderboard.json").read_text())
    assert sorted(r["name"] for r in board["runs"]) == sorted(TEXT2OMOP_RUNS)
    assert len(board["pairs"]) == 10 and "no run was scored with a test suite" in board["ts_note"]
    for row in board["runs"]:
        summary = json.loads((tmp_path / "runs" / row["name"] / "summary.json").read_text())
        assert (row["ex"], row["ex_ci"]) == (summary["ex"], summary["ex_ci"])
    opened = open_page(browser, tmp_path / "leaderboard" / "leaderboard.html")
    assert opened.errors == [] and opened.requests == []
    assert opened.visible_ids() == [r["name"] for r in board["runs"]]
    assert opened.column(2) == [str(r["ex_rank"]) for r in board["runs"]]
    assert _colours(opened) > 20
