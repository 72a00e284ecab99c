"""The review pages of curation, scoring and compare, made by ``sqlgold`` from hostile
inputs and opened in Chromium under their own content security policy (issue 57,
finding 16 and the page attacks): predictions, cell values, questions, task ids and
file names that carry HTML, script, ``</script>``, ``javascript:`` URLs, bidi and control
characters, and a 1 MB value.  Nothing runs, nothing is requested, what a page shows is
what ran or was asked (a bidi override shown as ``⟨U+202E⟩``), and every record opens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_run import sqlgold, write_jsonl
from tests.score.pages.browser_page import open_page

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: "SELECT 1 -- RLO 0 =" shows as "= 0 ..."
PWN = "window.pwned=1"
SCRIPT = f"</script><script>{PWN}</script>"
IMG = f'<img src=x onerror="{PWN}">'
HOSTILE_TEXT = f'{SCRIPT}{IMG}<a href="javascript:{PWN}">x</a>{RLO}evil\x1b[31m\u200b'

SOURCE = [
    {"format": "sqlgold.source/1", "id": "javascript:void", "gold_dialect": "duckdb",
     "question": f"How many persons? {HOSTILE_TEXT}",
     "gold_sql": f"SELECT count(*) AS n FROM cdm.person -- {SCRIPT} {RLO}",
     "answer_sql": "SELECT count(*) AS n FROM cdm.person", "answer_dialect": "duckdb"},
    {"format": "sqlgold.source/1", "id": "dropped", "gold_dialect": "duckdb",
     "question": f"Dropped: {IMG}", "gold_sql": f"SELECT '{IMG}{RLO}' AS n",
     "answer_sql": f"SELECT '{SCRIPT}' AS n", "answer_dialect": "duckdb"},
    {"format": "sqlgold.source/1", "id": "big", "gold_dialect": "duckdb",
     "question": "A million characters", "gold_sql": "SELECT repeat('x', 1048576) AS n",
     "answer_sql": "SELECT repeat('x', 1048576) AS n", "answer_dialect": "duckdb"},
]  # fmt: skip

ANSWERS = {
    "javascript:void": [
        f"```sql\nSELECT 1130 AS n -- {SCRIPT}{RLO} 0 =\n```\n{HOSTILE_TEXT}",
        f"SELECT '{IMG}{RLO}' AS n\n\nThis is {SCRIPT}",
    ],
    "big": ["SELECT repeat('z', 1048576) AS n", "SELECT repeat('x', 1048576) AS n"],
}

#: what the opened page must not have: a script of the data's, an element it made
CHECK = """() => ({
  pwned: window.pwned === undefined ? null : window.pwned,
  scripts: document.scripts.length,
  images: document.images.length,
  links: document.querySelectorAll("a[href]").length,
  hidden: /[\\u202e\\u200b\\u001b]/.test(document.body.innerText),
})"""


def _open_every_record(opened) -> dict[str, str]:
    texts = {}
    for record_id in opened.visible_ids():
        opened.page.locator(f'#rows tr[data-id="{record_id}"] button').click()
        texts[record_id] = opened.page.inner_text("#detail")
    return texts


def _safe(opened) -> dict[str, Any]:
    dialogs: list[str] = []
    opened.page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    texts = _open_every_record(opened)
    found = opened.page.evaluate(CHECK)
    assert found == {"pwned": None, "scripts": 2, "images": 0, "links": 0, "hidden": False}
    assert dialogs == [] and opened.errors == [] and opened.requests == []
    csp = opened.page.get_attribute('meta[http-equiv="Content-Security-Policy"]', "content")
    assert csp is not None and "default-src 'none'" in csp
    return texts


@pytest.fixture(scope="module")
def pages(omop_db, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hostile pages")
    source = write_jsonl(root / f"{IMG}_source.jsonl", SOURCE)
    tasks = root / "t_tasks.jsonl"
    done = sqlgold("curate", source, "--db", omop_db, "--out", tasks, "-q")
    assert done.returncode == 0, done.stderr
    runs = []
    for i in range(2):
        preds = write_jsonl(
            root / f"{IMG}{RLO}{i}.jsonl",
            [{"task_id": t, "language": "en", "output": outputs[i]}
             for t, outputs in ANSWERS.items()],
        )  # fmt: skip
        out = root / f"run{i}"
        done = sqlgold("score", "run", tasks, preds, "--db", omop_db, "--split", "all",
                       "--out", out, "-q")  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs.append(out)
    done = sqlgold("score", "compare", *runs, "--out", root / "ab")
    assert done.returncode == 0, done.stderr
    return {
        "curation": root / "t_report.html",
        "scoring": runs[0] / "report.html",
        "compare": root / "ab" / "report.html",
    }


@pytest.mark.parametrize("page", ["curation", "scoring", "compare"])
def test_a_hostile_page_runs_nothing_and_shows_what_ran(browser, pages, page) -> None:
    path = pages[page]
    assert path.stat().st_size < 3 * 2**20  # a 1 MB value is cut for the page
    opened = open_page(browser, path)
    texts = _safe(opened)
    assert texts, "no record to open"
    shown = "\n".join(texts.values())
    assert "⟨U+202E⟩" in shown  # the override shown where it sits, not obeyed
    assert "</script>" in shown  # the hostile text shown as text
    body = opened.page.inner_text("body")
    assert "⟨U+202E⟩" in body or page == "curation"  # a file name in the summary
    opened = open_page(browser, path, "javascript:void")  # a hash link: still only text
    assert opened.page.evaluate(CHECK)["pwned"] is None and opened.errors == []


def test_the_scoring_page_shows_the_prediction_as_it_ran(browser, pages) -> None:
    """Finding 16: a prediction's SQL with U+202E displayed as other text than what ran."""
    ran = json.loads((pages["scoring"].parent / "results.jsonl").read_text().splitlines()[1])
    assert ran["task_id"] == "javascript:void" and RLO in ran["executed_sql"]
    opened = open_page(browser, pages["scoring"], "javascript:void")
    code = opened.page.inner_text("#detail pre.sql")
    assert code.replace("⟨U+202E⟩", RLO).split() == ran["executed_sql"].split()
