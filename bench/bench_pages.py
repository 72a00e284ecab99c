"""The review pages' cost: size, opening time in headless Chromium, and share of a run.

    .venv/bin/python bench/bench_pages.py [--db CDM.duckdb]

1. the scoring page of a 10,000-instance run (records made to results.jsonl's shape,
   previews by the scorer's own code): bytes, seconds to render and write it, and seconds
   from navigation until the page is loaded and interactive (its script has built the
   table: ``body[data-ready]``), then until a filter by outcome has redrawn the table;
2. the curation page of 2,533 records (the DataQualityDashboard corpus's size), likewise;
3. the share of page writing in a real scoring run: ``run_scoring`` of the embedded task
   set (every answer one of right, wrong, failing, unparseable) on the embedded database,
   gold cache warm, against building and writing that run's page from the same run folder;
   and the share of keeping both results' first rows in the records (the same run with
   :func:`score.scoring.result_preview.result_preview` switched off).

Targets (issue 30): a page under 10 MB and open in under 2 s; page writing at most 5% of
a run's time.  Each time is the median of ``--runs`` runs.  Figures go to
``bench/pages.json`` and ``bench/pages.md``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the made-up runs of tests/score/pages

from tests.score.pages.conftest import chromium_path  # noqa: E402
from tests.score.pages.synthetic_run import make_curation, make_run  # noqa: E402

from score.cdm.embedded import embedded_path  # noqa: E402
from score.execution.executor import Executor  # noqa: E402
from score.files import write_atomic  # noqa: E402
from score.pages.curation_page import curation_page  # noqa: E402
from score.pages.scoring_page import scoring_page  # noqa: E402
from score.scoring import phases  # noqa: E402
from score.scoring.run import ScoringOptions, run_scoring  # noqa: E402
from score.scoring.run_folder import read_run  # noqa: E402

TASKS = ROOT / "data" / "benchmark" / "omop_tasks.jsonl"
TARGET_BYTES = 10_000_000
TARGET_OPEN_S = 2.0
TARGET_SHARE = 0.05


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def open_times(path: Path, runs: int, pick: str) -> dict[str, float]:
    """Median seconds to loaded+interactive and to a filtered redraw, fresh page each run."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    if executable is None:
        raise SystemExit("bench_pages: no Chromium found (install Debian's chromium)")
    ready, filtered = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            start = time.perf_counter()
            page.goto(path.resolve().as_uri())
            page.wait_for_selector("body[data-ready]", timeout=60_000)
            ready.append(time.perf_counter() - start)
            first = page.eval_on_selector("#pick-" + pick, "s => s.options[1].value")
            start = time.perf_counter()
            page.select_option("#pick-" + pick, first)
            page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
            filtered.append(time.perf_counter() - start)
            page.close()
        browser.close()
    return {"open_s": statistics.median(ready), "filter_s": statistics.median(filtered)}


def page_figures(name: str, html: str, render_s: float, work: Path, runs: int, pick: str) -> dict:
    path = work / f"{name}.html"
    start = time.perf_counter()
    write_atomic(path, html)
    written_s = render_s + time.perf_counter() - start
    log(f"{name}: {path.stat().st_size / 1e6:.2f} MB, rendered and written in {written_s:.2f} s")
    return {"bytes": path.stat().st_size, "write_s": written_s, **open_times(path, runs, pick)}


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def scoring_share(db: Path, work: Path, runs: int) -> dict:
    """run_scoring of the embedded tasks (page included) against writing its page alone."""
    tasks = [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines()[1:]]
    preds = work / "preds.jsonl"
    with preds.open("w", encoding="utf-8") as f:
        for i, t in enumerate(tasks):
            for lang in t["questions"]:
                gold = t["gold_sql"] or "SELECT 1"
                output = (
                    f"```sql\n{gold}\n```",
                    f"```sql\n{gold.replace('SELECT', 'SELECT 1 AS extra,', 1)}\n```",
                    "SELECT * FROM no_such_table",
                    "I cannot answer that.",
                )[i % 4]
                f.write(json.dumps({"task_id": t["id"], "language": lang, "output": output}) + "\n")
    totals, pages, bare = [], [], []
    by_id = {t["id"]: t for t in tasks}
    options = ScoringOptions(cache_dir=work / "cache", with_priors=False, split="all")
    kept_preview = phases.result_preview
    with Executor(db) as ex:
        run_scoring(TASKS, preds, work / "warm", ex, options)  # the gold cache, warm
        for i in range(runs):
            out = work / f"run{i}"
            total, _ = timed(lambda out=out: run_scoring(TASKS, preds, out, ex, options))
            phases.result_preview = lambda *a, **k: None  # the same run keeping no rows
            try:
                without, _ = timed(
                    lambda i=i: run_scoring(TASKS, preds, work / f"bare{i}", ex, options)
                )
            finally:
                phases.result_preview = kept_preview
            bare.append(without)
            run = read_run(out)
            page_s, _ = timed(
                lambda out=out, run=run: write_atomic(out / "report.html", scoring_page(run, by_id))
            )
            totals.append(total)
            pages.append(page_s)
            log(
                f"scoring run {i + 1}: {total:.2f} s ({without:.2f} s keeping no rows), "
                f"its page {page_s:.3f} s"
            )
    total, page = statistics.median(totals), statistics.median(pages)
    return {
        "instances": len(read_run(work / "run0")["records"]),
        "run_s": total,
        "page_s": page,
        "share": page / total,
        "run_without_preview_s": statistics.median(bare),
        "preview_share": (total - statistics.median(bare)) / total,
    }


def markdown(figures: dict) -> str:
    s, c, r = figures["scoring_page"], figures["curation_page"], figures["scoring_run"]

    def row(label: str, f: dict, n: int) -> str:
        return (
            f"| {label} | {n:,} | {f['bytes'] / 1e6:.2f} MB | {f['write_s']:.2f} s | "
            f"{f['open_s']:.2f} s | {f['filter_s']:.3f} s |"
        )

    return "\n".join(
        [
            "# Review pages (bench/bench_pages.py)",
            "",
            "| page | records | size | render + write | open (loaded, interactive) | filter |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
            row("scoring run", s, figures["instances"]),
            row("curation report", c, figures["curation_records"]),
            "",
            f"A scoring run of the embedded task set ({r['instances']} instances, priors off, "
            f"gold cache warm): {r['run_s']:.2f} s; writing its page "
            f"{r['page_s']:.3f} s = {100 * r['share']:.1f}% of it. Keeping both results' first "
            f"rows for the page (the records' preview) costs the run "
            f"{100 * r['preview_share']:.1f}% (the same run keeping none: "
            f"{r['run_without_preview_s']:.2f} s).",
            "",
            f"Targets: under {TARGET_BYTES / 1e6:.0f} MB, open under {TARGET_OPEN_S:.0f} s, "
            f"page at most {100 * TARGET_SHARE:.0f}% of a run.",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=embedded_path())
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--records", type=int, default=2_533)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "pages.json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_pages_"))
    try:
        log(f"making a {args.instances}-instance run")
        run, tasks = make_run(args.instances)
        render_s, html = timed(lambda: scoring_page(run, tasks))
        scoring = page_figures("scoring", html, render_s, work, args.runs, "outcome")
        report, kept, sources = make_curation(args.records)
        render_s, html = timed(lambda: curation_page(report, kept, sources))
        curation = page_figures("curation", html, render_s, work, args.runs, "status")
        share = scoring_share(args.db, work, args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "instances": args.instances,
        "curation_records": args.records,
        "scoring_page": scoring,
        "curation_page": curation,
        "scoring_run": share,
        "targets": {"bytes": TARGET_BYTES, "open_s": TARGET_OPEN_S, "share": TARGET_SHARE},
    }
    write_atomic(args.out, json.dumps(figures, indent=2, sort_keys=True) + "\n")
    text = markdown(figures)
    write_atomic(args.out.with_suffix(".md"), text)
    print(text)


if __name__ == "__main__":
    main()
