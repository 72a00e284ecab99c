"""The pages as bytes: the same input gives the same bytes, hostile text stays text,
nothing in a page points outside it."""

from __future__ import annotations

import json
import re

from score.pages.compare_page import compare_page
from score.pages.curation_page import curation_page
from score.pages.document import json_block
from score.pages.scoring_page import scoring_page
from score.statistics.stats import compare_runs
from tests.score.pages.synthetic_run import HOSTILE, make_curation, make_run


def _data(page: str) -> dict:
    block = re.search(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    assert block is not None
    return json.loads(block.group(1))


def test_the_same_run_gives_the_same_bytes() -> None:
    run, tasks = make_run(40)
    first = scoring_page(run, tasks).encode("utf-8")
    again_run, again_tasks = make_run(40)
    assert scoring_page(again_run, again_tasks).encode("utf-8") == first


def test_hostile_sql_is_data_not_markup() -> None:
    run, tasks = make_run(20)
    run["summary"]["run"] = HOSTILE
    page = scoring_page(run, tasks)
    # the only </script> in the page are the ends of its two script elements
    assert page.count("</script>") == 2
    assert "<img" not in page
    assert "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page  # the title, escaped
    data = _data(page)
    texts = json.dumps(data, ensure_ascii=False)
    assert HOSTILE in texts  # read back, the text is whole
    assert sum(HOSTILE in json.dumps(r["d"], ensure_ascii=False) for r in data["rows"]) > 0


def test_json_block_escapes_what_could_end_a_script() -> None:
    text = json_block({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_a_page_requests_nothing_outside_itself() -> None:
    run, tasks = make_run(20)
    page = scoring_page(run, tasks)
    assert "default-src 'none'" in page
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:|//)", page)
    assert not re.search(r"@import|url\(", page)


def test_the_summary_is_plain_html() -> None:
    run, tasks = make_run(50)
    page = scoring_page(run, tasks)
    summary = page.split('<section id="table-part"')[0]
    assert "EX" in summary and "95% CI" in summary and "EX by tier" in summary
    ex = run["summary"]["ex"]
    assert f"{ex:.3f}" in summary


def test_every_instance_is_a_row_that_opens_to_both_sqls_and_results() -> None:
    run, tasks = make_run(30)
    data = _data(scoring_page(run, tasks))
    assert [r["id"] for r in data["rows"]] == [r["task_id"] for r in run["records"]]
    mismatch = next(r for r in data["rows"] if r["c"][4] == "mismatch")
    kinds = [b["t"] for b in mismatch["d"]]
    assert "side" in kinds and "diff" in kinds
    assert mismatch["c"][5] == "1 gold row(s) missing from the prediction"  # the row's reason
    sides = [b for b in mismatch["d"] if b["t"] == "side"]
    labels = [i["label"] for s in sides for i in s["items"]]
    assert labels == ["prediction (duckdb)", "gold", "predicted result", "gold result"]


def test_without_its_tasks_a_page_says_it_has_no_gold_sql() -> None:
    run, _ = make_run(10)
    page = scoring_page(run, None)
    assert "no gold SQL" in page


def test_compare_lists_only_discordant_instances() -> None:
    a, tasks = make_run(30)
    b, _ = make_run(30)
    for r in b["records"][:10]:
        r["outcome"] = "correct" if r["outcome"] != "correct" else "mismatch"
    comparison = compare_runs(a["records"], b["records"], resamples=100)
    data = _data(compare_page(a, b, comparison, tasks))
    assert comparison["b"] + comparison["c"] == len(data["rows"]) > 0
    assert {r["c"][3] for r in data["rows"]} <= {"right in A, wrong in B", "wrong in A, right in B"}


def test_curation_page_shows_counts_and_every_record() -> None:
    report, tasks, sources = make_curation(40)
    page = curation_page(report, tasks, sources)
    assert page == curation_page(report, tasks, sources)
    data = _data(page)
    assert len(data["rows"]) == 40
    dropped = [r for r in data["rows"] if r["c"][1] == "dropped"]
    assert len(dropped) == report["counts"]["dropped"]
    assert any(b.get("label") == "why dropped" for b in dropped[0]["d"])
    assert "dropped, by rule" in page.split('<section id="table-part"')[0]


def test_a_wide_result_says_how_many_columns_are_not_shown() -> None:
    from score.execution.result import QueryResult
    from score.pages.instance_view import preview_blocks
    from score.scoring.result_preview import result_preview

    wide = QueryResult.from_rows([f"c{i}" for i in range(30)], [tuple(range(30))] * 9)
    (side,) = preview_blocks(result_preview(wide, wide, match=True, order_matters=False))
    predicted, gold = side["items"]
    assert len(gold["columns"]) == 16 and gold["hiddenColumns"] == 14
    assert len(gold["rows"]) == 5 and gold["total"] == 9


def test_a_mismatch_s_cause_is_shown_where_the_instance_opens() -> None:
    from score.pages.instance_view import instance_blocks

    record = {
        "task_id": "t",
        "language": "en",
        "outcome": "mismatch",
        "reason": "different",
        "mismatch_cause": {"name": "duplicates", "detail": "the same distinct rows"},
    }
    facts = instance_blocks(record, None, None)[0]["items"]
    assert ["mismatch cause", "duplicates: the same distinct rows"] in facts
    assert all(
        f[0] != "mismatch cause"
        for f in instance_blocks({**record, "mismatch_cause": None}, None, None)[0]["items"]
    )
