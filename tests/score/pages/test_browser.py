"""The pages in a real browser (headless Chromium): they load with no error and no
request, filter, sort, open a record by click and by ``#id``, and draw something."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import pytest

from score.pages.compare_page import compare_page
from score.pages.curation_page import curation_page
from score.pages.scoring_page import scoring_page
from score.statistics.stats import compare_runs
from tests.score.pages.browser_page import DISTINCT_COLOURS, open_page
from tests.score.pages.synthetic_run import make_curation, make_run

DOC_IMAGES = Path(__file__).resolve().parents[3] / "docs" / "img"


@pytest.fixture(scope="module")
def run_page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    run, tasks = make_run(60)
    path = tmp_path_factory.mktemp("run") / "report.html"
    path.write_text(scoring_page(run, tasks), encoding="utf-8")
    return path, run


def test_loads_with_no_error_and_no_request(browser: Any, run_page) -> None:
    path, run = run_page
    opened = open_page(browser, path)
    assert opened.errors == []
    assert opened.requests == []
    assert len(opened.visible_ids()) == len(run["records"])
    assert opened.page.text_content("#shown") == f"{len(run['records'])} of 60 shown"


def test_filtering_by_outcome_and_by_text(browser: Any, run_page) -> None:
    path, run = run_page
    opened = open_page(browser, path)
    opened.page.select_option("#pick-outcome", "mismatch")
    want = [r["task_id"] for r in run["records"] if r["outcome"] == "mismatch"]
    assert opened.visible_ids() == want
    assert set(opened.column(4)) == {"mismatch"}
    opened.page.fill("#q", "omop-00011")
    assert opened.visible_ids() == [i for i in want if "omop-00011" in i]
    opened.page.select_option("#pick-outcome", "")
    opened.page.fill("#q", "NO_SUCH_TABLE_2 /*")  # words of the SQL, in any case
    assert opened.visible_ids() == ["omop-00002"]
    opened.page.fill("#q", "")
    assert len(opened.visible_ids()) == 60
    assert opened.errors == []


def test_sorting_by_a_column_and_back(browser: Any, run_page) -> None:
    path, run = run_page
    opened = open_page(browser, path)
    seconds = opened.page.locator("#head button", has_text="seconds")
    seconds.click()
    shown = [float(v) for v in opened.column(6)]
    assert shown == sorted(shown) and shown != [float(v) for v in sorted(shown, reverse=True)]
    seconds.click()
    assert [float(v) for v in opened.column(6)] == sorted(shown, reverse=True)
    assert opened.page.get_attribute("#head th:last-child", "aria-sort") == "descending"
    opened.page.locator("#head button", has_text="outcome").click()
    outcomes = opened.column(4)
    assert outcomes == sorted(outcomes)


def test_opening_a_record_shows_its_sql_and_the_rows_that_differ(browser: Any, run_page) -> None:
    path, run = run_page
    opened = open_page(browser, path)
    first_mismatch = next(r for r in run["records"] if r["outcome"] == "mismatch")
    button = opened.page.locator(f'#rows tr[data-id="{first_mismatch["task_id"]}"] button')
    button.focus()
    opened.page.keyboard.press("Enter")  # keyboard: the row is a button
    detail = opened.page.locator("#detail")
    detail.wait_for(state="visible")
    assert button.get_attribute("aria-expanded") == "true"
    assert opened.page.url.endswith("#" + first_mismatch["task_id"])
    text = detail.inner_text()
    assert "PREDICTION" in text.upper() and "GOLD RESULT" in text.upper()
    missing = first_mismatch["preview"]["missing_count"]
    assert f"-{missing} gold row(s) missing from the prediction" in text
    assert detail.locator("table.result tr.missing").count() >= 1  # marked in the gold table
    assert detail.locator("table.result tr.extra").count() >= 1
    assert detail.locator("pre.sql .k").count() > 0  # keywords highlighted
    assert opened.errors == []


def test_a_hash_link_opens_that_record(browser: Any, run_page) -> None:
    path, _ = run_page
    opened = open_page(browser, path, "omop-00042")
    assert opened.page.is_visible("#detail")
    assert opened.page.text_content("#detail-title") == "omop-00042"
    assert opened.page.get_attribute('#rows tr[data-id="omop-00042"] button', "aria-expanded") == (
        "true"
    )
    # a record hidden by a filter is shown when its link is followed
    opened.page.select_option("#pick-outcome", "correct")
    opened.page.evaluate("location.hash = 'omop-00003'")
    opened.page.wait_for_function(
        "document.getElementById('detail-title').textContent === 'omop-00003'"
    )
    assert "omop-00003" in opened.visible_ids()
    assert opened.errors == []


def test_the_summary_reads_with_scripts_off(browser: Any, run_page) -> None:
    path, run = run_page
    opened = open_page(browser, path, java_script_enabled=False)
    text = opened.page.inner_text("body")
    assert "EX" in text and "95% CI" in text and "EX by tier" in text
    assert f"{run['summary']['ex']:.3f}" in text
    assert not opened.page.is_visible("#table-part")
    assert opened.requests == []


def _colours(opened, png: bytes) -> int:
    return opened.page.evaluate(DISTINCT_COLOURS, base64.b64encode(png).decode("ascii"))


def _screenshot(opened, name: str, tmp_path: Path) -> bytes:
    png = opened.page.screenshot(full_page=False)
    (tmp_path / name).write_bytes(png)
    if os.environ.get("SQLGOLD_DOC_SCREENSHOTS"):  # docs/explanation/pages.md's pictures
        DOC_IMAGES.mkdir(parents=True, exist_ok=True)
        (DOC_IMAGES / name).write_bytes(png)
    return png


def test_screenshots_are_not_blank(browser: Any, run_page, tmp_path: Path) -> None:
    path, run = run_page
    opened = open_page(browser, path)
    assert _colours(opened, _screenshot(opened, "pages-scoring.png", tmp_path)) > 20
    mismatch = next(r for r in run["records"] if r["outcome"] == "mismatch")["task_id"]
    opened = open_page(browser, path, mismatch)
    opened.page.locator("#detail").scroll_into_view_if_needed()
    assert _colours(opened, _screenshot(opened, "pages-instance.png", tmp_path)) > 20
    blank = open_page(browser, path)
    blank.page.evaluate("document.body.innerHTML = ''")
    assert _colours(blank, blank.page.screenshot()) <= 2  # the check can fail


def test_compare_page(browser: Any, tmp_path: Path) -> None:
    a, tasks = make_run(40)
    b, _ = make_run(40)
    for r in b["records"][:12]:
        r["outcome"] = "correct" if r["outcome"] != "correct" else "mismatch"
    comparison = compare_runs(a["records"], b["records"], resamples=100)
    path = tmp_path / "report.html"
    path.write_text(compare_page(a, b, comparison, tasks), encoding="utf-8")
    opened = open_page(browser, path)
    assert opened.errors == [] and opened.requests == []
    assert _colours(opened, _screenshot(opened, "pages-compare.png", tmp_path)) > 20
    assert len(opened.visible_ids()) == comparison["b"] + comparison["c"]
    opened.page.select_option("#pick-which", "wrong in A, right in B")
    assert len(opened.visible_ids()) == comparison["c"]
    first = opened.visible_ids()[0]
    opened.page.locator(f'#rows tr[data-id="{first}"] button').click()
    text = opened.page.inner_text("#detail")
    assert "A: made-up" in text and "B: made-up" in text
    assert "McNemar" in opened.page.inner_text("body")


def test_curation_page(browser: Any, tmp_path: Path) -> None:
    report, tasks, sources = make_curation(70)
    path = tmp_path / "made-up_report.html"
    path.write_text(curation_page(report, tasks, sources), encoding="utf-8")
    opened = open_page(browser, path)
    assert opened.errors == [] and opened.requests == []
    assert len(opened.visible_ids()) == 70
    opened.page.select_option("#pick-status", "dropped")
    assert len(opened.visible_ids()) == report["counts"]["dropped"]
    opened.page.select_option("#pick-rule", "empty_result")
    ids = opened.visible_ids()
    assert ids and all(r["rule"] == "empty_result" for r in report["records"] if r["id"] in ids)
    opened.page.locator(f'#rows tr[data-id="{ids[0]}"] button').click()
    assert "why dropped" in opened.page.inner_text("#detail").lower()
    kept = next(t["id"] for t in tasks if t["transpile_rules"])
    opened = open_page(browser, path, kept)
    text = opened.page.inner_text("#detail")
    assert "float_is_double" in text and "SOURCE SQL" in text.upper()
    assert _colours(opened, _screenshot(opened, "pages-curation.png", tmp_path)) > 20


def test_a_task_link_opens_its_first_language(browser: Any, tmp_path: Path) -> None:
    run, tasks = make_run(6)
    korean = [{**r, "language": "ko"} for r in run["records"]]
    run["records"] = sorted(run["records"] + korean, key=lambda r: (r["task_id"], r["language"]))
    path = tmp_path / "report.html"
    path.write_text(scoring_page(run, tasks), encoding="utf-8")
    opened = open_page(browser, path, "omop-00002")
    assert opened.page.text_content("#detail-title") == "omop-00002.en"
    assert "omop-00002.ko" in opened.visible_ids()
    assert opened.errors == []


def test_a_long_table_is_drawn_a_page_at_a_time(browser: Any, tmp_path: Path) -> None:
    run, tasks = make_run(1200)
    path = tmp_path / "report.html"
    path.write_text(scoring_page(run, tasks), encoding="utf-8")
    opened = open_page(browser, path)
    assert len(opened.visible_ids()) == 500
    assert opened.page.text_content("#shown") == "1200 of 1200 shown"
    opened.page.click("#more")
    assert len(opened.visible_ids()) >= 1000
    # a link to a record not drawn yet draws it and opens it
    opened = open_page(browser, path, "omop-01150")
    assert opened.page.text_content("#detail-title") == "omop-01150"
    assert "omop-01150" in opened.visible_ids()
    # sorting sorts all 1200, not the page drawn
    opened.page.locator("#head button", has_text="seconds").click()
    opened.page.locator("#head button", has_text="seconds").click()
    slowest = max(r["timings"]["total_s"] for r in run["records"])
    assert float(opened.column(6)[0]) == round(slowest, 3)
    assert opened.errors == []
