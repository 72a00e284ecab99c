"""sqlgold's bench: what curation and scoring cost, against DuckDB itself and a naive baseline.

    make bench                                   # the default run (~15 min on 2 cores)
    .venv/bin/python bench/run_bench.py --quick  # a smoke run of a minute or two

Figures (see bench/README.md for what each one includes and excludes):

1. scoring overhead: run_scoring wall time over raw DuckDB time for the same queries,
   warm and cold gold cache, and the gold queries a second scoring executes;
2. comparator cost per profile at 10k / 100k / 1M rows x 8 columns, against a naive
   sorted-string-tuples baseline, and the 1M / 100k growth;
3. wide results: 2, 6, 10, 14 permuted columns;
4. curation: records per second and wall time over raw execution of the kept golds (and
   of every gold curation had to run); the same on the CDM replicated 20x
   (``curation_scaled``, not in ``--quick`` unless named in ``--only``);
5. peak RSS of scoring 10,000 instances in a fresh process (with its query processes);
6. hostile: a scoring run where 1 in 10 predictions is a resource attack, its wall time
   over the honest run's, the slowest attack over the timeout, and its peak RSS;
7. start-up: ``sqlgold --help`` and ``sqlgold verify`` of a trivial pair, fresh processes;
8. DataQualityDashboard's 2,533 check instances curated with two worker processes:
   records per second (not in ``--quick`` unless named in ``--only``).
9. PostgreSQL: run_scoring wall time over raw PostgreSQL for the same queries (a
   throwaway server started from the installed binaries, or ``--pg-url``).
10. efficiency: BIRD's VES of the reference answers against their golds, once per run,
   and its spread over the runs (with the EXPLAIN-cost variant, which must not move).
11. render + transpile per record of every shared corpus, sqlgold against OHDSI
   SqlRender's own jar (``--sqlrender-jar`` or ``$SQLRENDER_JAR``; skipped without it).
12. one prediction scored with the gold cache off, over running it and its gold
   directly (DuckDB; PostgreSQL in figure 9's run).

Every figure is the median of ``--runs`` runs (ratios are taken within a run, then the
median).  The table goes to stdout and ``bench/latest.md``, the figures to
``bench/latest.json`` (``--out``); ``--readme`` also replaces the body of README.md's
"## Benchmarks" section with the table.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import bench_compare
import bench_curation
import bench_efficiency
import bench_hostile
import bench_one_prediction
import bench_postgres
import bench_profile
import bench_render
import bench_scoring
import bench_startup
from bench_common import ROOT, SRC, embedded_db, log, machine, src_digest

FIGURES = (
    "scoring",
    "comparator",
    "wide",
    "curation",
    "curation_scaled",
    "memory",
    "hostile",
    "startup",
    "curation_dqd",
    "postgres",
    "efficiency",
    "render",
    "curation_postgres",
    "one_prediction",
)
TARGETS = {
    "scoring_overhead_ratio": ("<=", 1.2),
    "gold_executions_second_run": ("==", 0),
    "comparator_vs_naive_1m": (">=", 5.0),
    "curation_ratio": ("<=", 4.0),
    "curation_required_ratio": ("<=", 1.5),
    "peak_rss_mb": ("<", 1024.0),
    "hostile_peak_rss_mb": ("<", 2048.0),
    "hostile_max_attack_over_timeout": ("<=", 2.0),
    "help_seconds": ("<", 0.3),
    "verify_seconds": ("<", 0.5),
    "postgres_scoring_overhead_ratio": ("<=", 1.3),
    "postgres_one_prediction_ratio": ("<=", 2.0),
    "render_vs_sqlrender": ("<=", 1.0),
    "one_prediction_process_seconds": ("<", 1.0),
    "text2omop_one_prediction_process_seconds": ("<", 1.0),
}
_SHOWN = {"<=": "at most", "<": "under", ">=": "at least", "==": "exactly"}
_UNIT = {
    "comparator_vs_naive_1m": "x",
    "peak_rss_mb": " MiB",
    "hostile_peak_rss_mb": " MiB",
    "hostile_max_attack_over_timeout": "x the timeout",
    "help_seconds": " s",
    "postgres_one_prediction_ratio": "x running the prediction and its gold",
    "verify_seconds": " s",
    "one_prediction_process_seconds": " s",
    "text2omop_one_prediction_process_seconds": " s",
}


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, default=embedded_db())
    p.add_argument(
        "--tasks",
        type=Path,
        default=bench_scoring.default_tasks(),
        help="task file whose reference answers are scored (figures 1, 5)",
    )
    p.add_argument(
        "--source",
        type=Path,
        default=bench_curation.OWN_SOURCE,
        help="the project's own source file to curate (figure 4)",
    )
    p.add_argument(
        "--querylibrary",
        type=Path,
        default=bench_curation.QUERYLIBRARY,
        help="folder of OHDSI QueryLibrary pages (figure 4; skipped if absent)",
    )
    p.add_argument(
        "--dqd",
        type=Path,
        default=bench_curation.DQD,
        help="DataQualityDashboard corpus (figure 6; skipped if absent)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        help="JSON output (default bench/latest.json; bench/quick.json with --quick)",
    )
    p.add_argument("--runs", type=int, default=None, help="runs per figure (default 3)")
    p.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 run, fewer instances and rows, a short budget",
    )
    p.add_argument("--only", default=None, help=f"comma-separated subset of {','.join(FIGURES)}")
    p.add_argument(
        "--instances", type=int, default=None, help="instances scored for figure 1 (default 2000)"
    )
    p.add_argument(
        "--memory-instances",
        type=int,
        default=None,
        help="instances scored for figure 5 (default 10000)",
    )
    p.add_argument(
        "--hostile-instances",
        type=int,
        default=None,
        help="instances scored for figure 6 (default 1000; 1 in 10 attacks)",
    )
    p.add_argument(
        "--rows", default=None, help="comparator row counts (default 10000,100000,1000000)"
    )
    p.add_argument(
        "--wide-rows", type=int, default=None, help="rows of the wide results (default 100000)"
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help="seconds one comparison may take before larger sizes are skipped (default 60)",
    )
    p.add_argument(
        "--profile-dir",
        type=Path,
        default=None,
        help="also cProfile one warm scoring and one curation pass into DIR "
        "(not part of any figure)",
    )
    p.add_argument(
        "--render",
        type=Path,
        default=None,
        metavar="JSON",
        help="measure nothing: print the table of an earlier report (with "
        "--readme, also put it into README.md)",
    )
    p.add_argument(
        "--pg-url",
        default=None,
        help="figure 8 on this PostgreSQL server (an administrator's URL; the CDM "
        "is loaded into its schema cdm) instead of a throwaway one",
    )
    p.add_argument(
        "--sqlrender-jar",
        type=Path,
        default=None,
        help="OHDSI SqlRender's jar for figure 10 (default $SQLRENDER_JAR; its "
        "replacementPatterns.csv from $SQLRENDER_PATTERNS or ../csv/ beside "
        "the jar)",
    )
    p.add_argument(
        "--readme",
        action="store_true",
        help="also write the table into docs/explanation/benchmarks.md (after its "
        "description of the figures)",
    )
    args = p.parse_args(argv)
    quick = args.quick
    args.runs = args.runs or (1 if quick else 3)
    args.instances = args.instances or (451 if quick else 2000)
    args.memory_instances = args.memory_instances or (1000 if quick else 10_000)
    args.hostile_instances = args.hostile_instances or (200 if quick else 1000)
    args.rows = [
        int(r)
        for r in (args.rows or ("10000,100000" if quick else "10000,100000,1000000")).split(",")
    ]
    args.wide_rows = args.wide_rows or (10_000 if quick else 100_000)
    args.budget = args.budget or (10.0 if quick else 60.0)
    args.out = args.out or ROOT / "bench" / ("quick.json" if quick else "latest.json")
    if args.only is None:  # a quick run leaves out the DQD corpus and the replicated CDM
        slow = ("curation_dqd", "curation_scaled")
        args.only = ",".join(f for f in FIGURES if not (quick and f in slow))
    args.only = [f for f in args.only.split(",") if f]
    unknown = set(args.only) - set(FIGURES)
    if unknown:
        p.error(f"unknown figure(s) {', '.join(sorted(unknown))}; known: {', '.join(FIGURES)}")
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def _met(key: str, value: Any) -> bool | None:
    if value is None or key not in TARGETS:
        return None
    op, bound = TARGETS[key]
    return {"<=": value <= bound, "<": value < bound, ">=": value >= bound, "==": value == bound}[
        op
    ]


def headline(results: dict[str, Any], rows: list[int]) -> dict[str, Any]:
    """The figures scripts read, under their agreed names."""
    out: dict[str, Any] = {}
    s = results.get("scoring")
    if s:
        out["scoring_overhead_ratio"] = s["ratio_warm"]
        out["scoring_overhead_ratio_cold"] = s["ratio_cold"]
        out["scoring_overhead_ratio_identical_texts"] = s["ratio_warm_identical_texts"]
        out["scoring_overhead_cpu_ratio"] = s.get("cpu_ratio_warm")
        out["scoring_overhead_cpu_ratio_cold"] = s.get("cpu_ratio_cold")
        out["gold_executions_second_run"] = s["gold_executions_second_run"]
    c = results.get("comparator")
    if c:
        out["comparator_seconds"] = {p: v for p, v in c["seconds"].items() if p != "naive"}
        out["naive_seconds"] = c["seconds"]["naive"]
        out["comparator_vs_naive_1m"] = (
            c["speedup_vs_naive_at_max"]["sqlgold"] if max(rows) == 1_000_000 else None
        )
        out["comparator_vs_naive_1m_by_profile"] = (
            {p: v for p, v in c["speedup_vs_naive_at_max"].items() if p != "naive"}
            if max(rows) == 1_000_000
            else None
        )
        out["comparator_growth_1m_over_100k"] = (
            {p: v for p, v in c["growth_max_over_previous"].items() if p != "naive"}
            if sorted(rows)[-2:] == [100_000, 1_000_000]
            else None
        )
    w = results.get("wide")
    if w:
        out["wide_columns_seconds"] = w["variants"]["same_multiset"]["seconds"]["sqlgold"]
        out["wide_columns_seconds_typed"] = w["variants"]["typed"]["seconds"]["sqlgold"]
    cu = results.get("curation")
    if cu:
        out["curation_ratio"] = cu.get("ratio")
        out["curation_required_ratio"] = cu.get("ratio_required_shipped")
        out["curation_records_per_second"] = cu.get("records_per_second")
    m = results.get("memory")
    if m:
        out["peak_rss_mb"] = m.get("peak_rss_mb")
    ho = results.get("hostile")
    if ho and ho.get("runs"):
        out["hostile_wall_ratio"] = ho["ratio"]
        out["hostile_peak_rss_mb"] = ho["peak_rss_mb"]
        out["hostile_max_attack_over_timeout"] = ho["max_attack_over_timeout"]
    st = results.get("startup")
    if st:
        out["help_seconds"] = st["help"]["wall_s"]
        out["verify_seconds"] = st["verify"]["wall_s"]
        out["verify_id_seconds"] = st["verify_id"]["wall_s"]
    cs = results.get("curation_scaled")
    if cs and cs.get("ratio") is not None:
        out["curation_scaled_ratio"] = cs["ratio"]
    cp = results.get("curation_postgres")
    if cp and cp.get("ratio") is not None:
        out["postgres_curation_ratio"] = cp["ratio"]
    dq = results.get("curation_dqd")
    if dq:
        out["curation_dqd_records_per_second"] = dq.get("records_per_second")
    rd = results.get("render")
    if rd and rd.get("worst_ratio") is not None:
        out["render_vs_sqlrender"] = rd["worst_ratio"]
    pg = results.get("postgres")
    if pg and pg.get("ratio_warm") is not None:
        out["postgres_scoring_overhead_ratio"] = pg["ratio_warm"]
        out["postgres_scoring_overhead_ratio_duckdb_dialect"] = pg["ratio_warm_duckdb_dialect"]
    one = results.get("one_prediction")
    if one:
        out["one_prediction_ratio"] = one["ratio"]
        out["one_prediction_gold_executions"] = one["gold_executions"]
        whole = one.get("whole_process") or {}
        if "shipped" in whole:
            out["one_prediction_process_seconds"] = whole["shipped"]["seconds"]
        if "text2omop" in whole:
            out["text2omop_one_prediction_process_seconds"] = whole["text2omop"]["seconds"]
    if pg and pg.get("one_prediction"):
        out["postgres_one_prediction_ratio"] = pg["one_prediction"]["ratio"]
    ef = results.get("efficiency")
    if ef:
        out["ves_reference_median"] = ef["ves_median"]
        out["ves_reference_spread"] = ef["ves_spread"]
        out["cost_ves_reference_spread"] = ef["cost_ves_spread"]
    out["targets"] = {
        k: {
            "target": f"{_SHOWN[op]} {bound:g}{_UNIT.get(k, '')}",
            "value": out.get(k),
            "met": _met(k, out.get(k)),
        }
        for k, (op, bound) in TARGETS.items()
        if k in out
    }
    growth = (out.get("comparator_growth_1m_over_100k") or {}).get("sqlgold")
    if growth is not None:
        bound = c["n_log_n_growth"]
        out["targets"]["comparator_growth_1m_over_100k"] = {
            "target": f"at most {bound:.1f} (n log n from 100k to 1M)",
            "value": growth,
            "met": growth <= bound,
        }
    if w:
        ws = out["wide_columns_seconds"]
        widths = sorted(int(k) for k in ws)
        lo, hi = str(widths[0]), str(widths[-1])
        if ws.get(lo) and ws.get(hi):
            growth_w = ws[hi] / ws[lo]
            bound_w = (int(hi) / int(lo)) ** 2
            out["wide_columns_growth"] = growth_w
            out["targets"]["wide_columns_growth"] = {
                "target": f"at most {bound_w:g} (quadratic in the column count; trying "
                f"every permutation: {math.perm(int(hi)) / math.perm(int(lo)):.0e})",
                "value": growth_w,
                "met": growth_w <= bound_w,
            }
    return out


# -- the table ----------------------------------------------------------------------------


def _lanes(parts: dict[str, float]) -> str:
    """How the query processes' bound splits between parsing answers and running them."""
    if not parts.get("parse_lane"):
        return ""
    return f": parsing {parts['parse_lane']:.0f}, running {parts.get('query_lane', 0):.0f}"


def _fmt(x: Any, digits: int = 3) -> str:
    if x is None:
        return "–"
    if isinstance(x, bool):
        return "yes" if x else "**no**"
    if isinstance(x, int):
        return f"{x:,}"
    if x >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}g}" if x < 1 else f"{x:.{digits}g}"


def _rows_label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k" if n >= 1000 else str(n)


def _remeasured(report: dict[str, Any]) -> str:
    """The sentences saying which figures later, partial runs replaced (a report merged
    from several runs: ``remeasured`` holds each later run's figures, date and machine,
    one entry or a list of them)."""
    again = report.get("remeasured")
    if not again:
        return ""
    cpu = report["machine"]["cpu"]

    def where(one: dict[str, Any]) -> str:  # a run on another machine says which
        theirs = one["machine"]["cpu"]
        return "" if theirs == cpu else f" on {theirs} ({one['machine']['cores']} cores)"

    return "".join(
        f" Figure{'s' if len(one['figures']) > 1 else ''} {', '.join(one['figures'])} "
        f"{'were' if len(one['figures']) > 1 else 'was'} measured again on {one['date']}"
        f"{where(one)}, commit {one['machine']['git_commit']}, {one['runs']} runs."
        for one in (again if isinstance(again, list) else [again])
    )


def render(report: dict[str, Any], details: tuple[str, ...] = FIGURES) -> str:
    h, r, m = report["figures"], report["results"], report["machine"]
    t = h.get("targets", {})
    dirty = " with uncommitted src/ changes" if m["src_uncommitted_changes"] else ""
    if m.get("src_changed_during_run"):
        dirty += " (src/ changed during the run; all figures measured the copy taken at the start)"
    lines = [
        f"Measured {report['date']} on {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB; "
        f"Python {m['python']}, duckdb {m['versions']['duckdb']}, sqlglot "
        f"{m['versions']['sqlglot']}, pyarrow {m['versions']['pyarrow']}; commit "
        f"{m['git_commit']}{dirty}. "
        f"Every figure is the median of {report['settings']['runs']} runs; ratios are taken "
        f"within one run. Bench time {report['bench_seconds'] / 60:.1f} min." + _remeasured(report),
        "",
        "| # | figure | measured | target | met |",
        "| --- | --- | --- | --- | --- |",
    ]

    def row(num, what, value, key=None, target="–"):
        met = t.get(key, {}).get("met") if key else None
        tgt = t[key]["target"] if key in t else target
        shown = _fmt(met) if met is not None else "–"
        lines.append(f"| {num} | {what} | {value} | {tgt} | {shown} |")

    s = r.get("scoring")
    if s:
        cpu_w, cpu_c = s.get("cpu_ratio_warm"), s.get("cpu_ratio_cold")
        row(
            1,
            f"scoring wall / raw DuckDB, warm gold cache ({s['instances']:,} instances)",
            f"{s['ratio_warm']:.2f} (medians {s['warm_s']:.1f} s / {s['raw_predicted_s']:.2f} s"
            + (f"; CPU time: {cpu_w:.2f}" if cpu_w else "")
            + ")",
            "scoring_overhead_ratio",
        )
        row(
            1,
            "scoring wall / raw DuckDB, cold gold cache (golds run once each)",
            f"{s['ratio_cold']:.2f} (medians {s['cold_s']:.1f} s / "
            f"{s['raw_predicted_s'] + s['raw_gold_s']:.2f} s"
            + (f"; CPU time: {cpu_c:.2f}" if cpu_c else "")
            + ")",
        )
        row(
            1,
            "the same, warm, with identical SQL texts in the copies (caches by SQL text hit)",
            f"{s['ratio_warm_identical_texts']:.2f}",
        )
        row(
            1,
            f"gold queries executed by a second scoring (first: {s['gold_executions_first_run']})",
            str(s["gold_executions_second_run"]),
            "gold_executions_second_run",
        )
    c = r.get("comparator")
    if c:
        big = _rows_label(max(c["rows"]))
        sq = c["seconds"]["sqlgold"][str(max(c["rows"]))]
        nv = c["seconds"]["naive"][str(max(c["rows"]))]
        row(
            2,
            f"sqlgold comparator speed-up over the naive baseline, {big} rows x 8 columns",
            f"{c['speedup_vs_naive_at_max']['sqlgold']:.1f}x ({_fmt(sq)} s vs {_fmt(nv)} s)",
            "comparator_vs_naive_1m" if big == "1M" else None,
        )
        g = c["growth_max_over_previous"].get("sqlgold")
        if g is not None:
            row(
                2,
                f"sqlgold time growth {big} / {_rows_label(sorted(c['rows'])[-2])} rows",
                f"{g:.1f}",
                "comparator_growth_1m_over_100k",
            )
    w = r.get("wide")
    if w:
        ws = w["variants"]["same_multiset"]["seconds"]["sqlgold"]
        growth_w = h.get("wide_columns_growth")
        row(
            3,
            f"sqlgold, {w['rows']:,} rows, permuted columns sharing one multiset: "
            + ", ".join(f"{k}" for k in ws)
            + " columns; time at 14 / at 2",
            " / ".join(f"{_fmt(v)} s" for v in ws.values())
            + (f"; growth {growth_w:.1f}" if growth_w is not None else ""),
            "wide_columns_growth",
        )
    cu = r.get("curation")
    if cu and cu.get("ratio") is not None:
        a = cu["sources"]["all"]
        own = cu["sources"].get("omop_source")
        if own and own.get("ratio_required") is not None:
            need = own["required"]
            row(
                4,
                f"curation of the shipped benchmark ({own['records']} records) / its required "
                f"executions run bare on DuckDB ({need['golds']} golds, {need['answers']} "
                f"reference answers, {need['nocase']} NOCASE and {need['determinism']} "
                "determinism reruns)",
                f"{own['ratio_required']:.2f} (medians {own['wall_s']:.2f} s / "
                f"{own['required_s']:.2f} s)",
                "curation_required_ratio",
            )
            row(
                4,
                "the same, both sources (QueryLibrary too)",
                f"{a['ratio_required']:.2f} (medians {a['wall_s']:.2f} s / "
                f"{a['required_s']:.2f} s)",
            )
        row(
            4,
            f"curation wall / raw DuckDB of the {a['kept_golds']} kept golds "
            f"({a['records']} records)",
            f"{cu['ratio']:.1f} (medians {a['wall_s']:.1f} s / {a['raw_s']:.2f} s)",
            "curation_ratio",
        )
        if a.get("ratio_golds_run") is not None:
            row(
                4,
                f"the same over raw DuckDB of the {a['golds_run']} golds curation had to run "
                "(kept, or dropped for their result)",
                f"{a['ratio_golds_run']:.1f} (medians {a['wall_s']:.1f} s / "
                f"{a['raw_run_s']:.2f} s)",
            )
        row(4, "curation throughput", f"{cu['records_per_second']:.1f} records/s")
    elif cu:
        row(4, "curation", "skipped: " + "; ".join(cu["notes"]))
    cs = r.get("curation_scaled")
    if cs and cs.get("ratio") is not None:
        a = cs["sources"]["all"]
        row(
            4,
            f"the same sources on the CDM replicated {cs['factor']}x "
            f"({a['kept_golds']} kept golds): curation wall / raw DuckDB of the kept golds",
            f"{cs['ratio']:.1f} (medians {a['wall_s']:.1f} s / {a['raw_s']:.2f} s; over the "
            f"{a['golds_run']} golds run {a['ratio_golds_run']:.1f})",
        )
    me = r.get("memory")
    if me and me.get("peak_rss_mb") is not None:
        parts = me.get("parts_mb")
        split = (
            f" (scoring process {parts['scoring_process']:.0f}, fork server "
            f"{parts['fork_server']:.0f}, query processes {parts['query_process']:.0f}"
            f"{_lanes(parts)})"
            if parts
            else ""
        )
        row(
            5,
            f"peak RSS scoring {me['instances']:,} instances in a fresh process, query "
            f"processes included ({me['rss_before_scoring_mb']:.0f} MiB before scoring)",
            f"{me['peak_rss_mb']:.0f} MiB{split}",
            "peak_rss_mb",
        )
    ho = r.get("hostile")
    if ho and ho.get("runs"):
        what = (
            f"{ho['instances']:,} instances, {ho['attacks']} of them resource attacks "
            f"(timeout {ho['timeout_seconds']:g} s, memory limit {ho['memory_limit']})"
        )
        row(
            6,
            f"hostile scoring wall / honest scoring wall, {what}",
            f"{ho['ratio']:.1f} (medians {ho['hostile_s']:.1f} s / {ho['honest_s']:.1f} s)",
        )
        row(
            6,
            "slowest attack, from sending it to its outcome, over the timeout",
            f"{ho['max_attack_over_timeout']:.2f}",
            "hostile_max_attack_over_timeout",
        )
        pm = ho["parts_mb"]
        row(
            6,
            "peak RSS of the hostile run (scoring process + fork server + query processes)",
            f"{ho['peak_rss_mb']:.0f} MiB ({pm['scoring_process']:.0f} + "
            f"{pm['fork_server']:.0f} + {pm['query_process']:.0f}{_lanes(pm)})",
            "hostile_peak_rss_mb",
        )
    st = r.get("startup")
    if st:
        row(
            7,
            "`sqlgold --help`, fresh process",
            f"{st['help']['wall_s']:.3f} s (CPU {st['help']['cpu_s']:.3f} s)",
            "help_seconds",
        )
        row(
            7,
            "`sqlgold verify` of a trivial pair on the embedded database, end to end",
            f"{st['verify']['wall_s']:.3f} s (CPU {st['verify']['cpu_s']:.3f} s)",
            "verify_seconds",
        )
        row(
            7,
            f"`sqlgold verify --id` of the last of {st['source_records']:,} source records",
            f"{st['verify_id']['wall_s']:.3f} s (CPU {st['verify_id']['cpu_s']:.3f} s)",
        )
    dq = r.get("curation_dqd")
    if dq and dq.get("records_per_second") is not None:
        row(
            8,
            f"DataQualityDashboard curation throughput, --jobs {dq['jobs']} "
            f"({dq['records']:,} records, {dq['kept']:,} kept)",
            f"{dq['records_per_second']:.1f} records/s (median {dq['wall_s']:.1f} s wall; "
            f"{dq['cpu_s']:.1f} CPU s, {dq['records_per_cpu_second']:.1f} records per CPU s)",
        )
    elif dq:
        row(8, "DataQualityDashboard curation", "skipped: " + "; ".join(dq["notes"]))
    pg = r.get("postgres")
    if pg and pg.get("ratio_warm") is not None:
        row(
            9,
            f"scoring wall / raw PostgreSQL, warm gold cache ({pg['instances']:,} "
            "instances, predictions in PostgreSQL SQL)",
            f"{pg['ratio_warm']:.2f} (medians {pg['warm_s']:.1f} s / "
            f"{pg['raw_predicted_s']:.2f} s)",
            "postgres_scoring_overhead_ratio",
        )
        row(
            9,
            "the same with DuckDB answers and `--dialect duckdb` (transpiled while scoring)",
            f"{pg['ratio_warm_duckdb_dialect']:.2f} (EX {pg['ex_duckdb_dialect']:.3f})",
        )
    elif pg:
        row(9, "PostgreSQL", "skipped: " + pg.get("note", ""))
    ef = r.get("efficiency")
    if ef:
        row(
            10,
            f"VES of the reference answers against their golds ({ef['n_correct']} right "
            f"answers of {ef['n']} answerable instances, {ef['timed_runs']} timed runs "
            f"each), over {ef['runs']} scorings",
            f"median {ef['ves_median']:.1f}, spread {ef['ves_spread']:.1f} ("
            + ", ".join(f"{v:.1f}" for v in ef["ves"])
            + ")",
        )
        row(
            10,
            "VES on EXPLAIN cost ratios, the same answers and scorings",
            ", ".join(f"{v:.1f}" for v in ef["cost_ves"]) + f" (spread {ef['cost_ves_spread']:g})",
        )
    _render_rows(r.get("render"), row)
    _one_prediction_rows(r.get("one_prediction"), (pg or {}).get("one_prediction"), row)
    cp = r.get("curation_postgres")
    if cp and cp.get("ratio") is not None:
        a = cp["sources"]["all"]
        row(
            4,
            "curation wall / raw PostgreSQL of the kept golds (the same sources, "
            "`--db postgresql://...`)",
            f"{cp['ratio']:.1f} (medians {a['wall_s']:.1f} s / {a['raw_s']:.2f} s)",
        )
    elif cp:
        row(4, "curation on PostgreSQL", "skipped: " + cp.get("note", ""))
    met = [f"`{k}` {_fmt(v['value'])}" for k, v in t.items() if v["met"]]
    unmet = [f"`{k}` {_fmt(v['value'])} ({v['target']})" for k, v in t.items() if v["met"] is False]
    lines += [
        "",
        f"Targets met: {', '.join(met) or 'none'}. Not met: {', '.join(unmet) or 'none'}.",
    ]
    lines += _detail_tables({k: v for k, v in r.items() if k in details})
    return "\n".join(lines) + "\n"


def _one_prediction_rows(duck: dict[str, Any] | None, pg: dict[str, Any] | None, row) -> None:
    """Figure 12's rows: one prediction scored (--no-cache) against running it and its gold."""
    for engine, one, key in (("DuckDB", duck, None), ("PostgreSQL", pg, "postgres_one")):
        if not one:
            continue
        row(
            12,
            f"scoring one prediction of the {one['instances']:.0f} instances, no gold cache, "
            f"{engine} / running it and its gold directly (gold queries run: "
            f"{one['gold_executions']:.0f})",
            f"{one['ratio']:.0f} (medians {one['scoring_s']:.2f} s / "
            f"{one['direct_s'] * 1000:.1f} ms; without the priors "
            f"{one['scoring_without_priors_s']:.2f} s)",
            f"{key}_prediction_ratio" if key else None,
        )
        if "scoring_cached_s" in one:
            row(
                12,
                f"the same, {engine}, with the cache an earlier scoring filled (gold "
                f"queries run: {one['gold_executions_cached']:.0f}; priors kept)",
                f"{one['ratio_cached']:.0f} ({one['scoring_cached_s']:.2f} s)",
                None,
            )
        whole = one.get("whole_process") or {}
        for name, key, what in (
            ("shipped", "one_prediction_process_seconds", "the project's task set"),
            ("text2omop", "text2omop_one_prediction_process_seconds", "TEXT-TO-OMOP's"),
        ):
            if name in whole:
                row(
                    12,
                    f"`sqlgold score run` of one prediction, whole process, {engine}, "
                    f"{what} {whole[name]['tasks']:,} tasks"
                    + (" (--profile text2omop)" if name == "text2omop" else "")
                    + ", the user cache folder as curation leaves it",
                    f"{whole[name]['seconds']:.2f} s",
                    key,
                )


def _render_rows(rd: dict[str, Any] | None, row) -> None:
    """Figure 11's rows: each corpus, sqlgold against SqlRender's first pass."""
    if not rd:
        return
    for name, c in rd["corpora"].items():
        if "sqlgold" not in c:
            row(11, f"render + transpile, {name}", "skipped: " + c.get("note", ""))
            continue
        sq = c["sqlgold"]
        written = c["template_cache"]["written"]
        what = (
            f"render + transpile per record, {name} ({c['records']:,} records, "
            f"{written:,} written from a template)"
        )
        if "sqlrender_first" not in c:
            row(
                11,
                what,
                f"{sq['mean_ms']:.2f} ms (median {sq['median_ms']:.2f}); SqlRender "
                f"skipped: {rd.get('sqlrender_note')}",
            )
            continue
        sr, warm = c["sqlrender_first"], c["sqlrender_warm"]
        row(
            11,
            what + " / SqlRender's",
            f"{c['ratio_first']:.2f} (mean {sq['mean_ms']:.2f} ms / {sr['mean_ms']:.2f} ms; "
            f"medians {sq['median_ms']:.2f} / {sr['median_ms']:.2f}; over SqlRender's warm "
            f"second pass ({warm['mean_ms']:.2f} ms) {c['ratio_warm']:.2f}"
            + _without_largest_text(c)
            + ")",
            "render_vs_sqlrender" if c["ratio_first"] == rd["worst_ratio"] else None,
        )


def _without_largest_text(c: dict[str, Any]) -> str:
    """Figure 11's ratio without the corpus's largest record, where the run measured it."""
    big, ratio = c.get("largest"), c.get("ratio_without_largest")
    if not big or ratio is None:
        return ""
    return (
        f"; without its largest record ({big['id']}: {big['sqlgold_ms']:.0f} ms / "
        f"{big['sqlrender_ms']:.0f} ms) {ratio:.2f}"
    )


def _detail_tables(r: dict[str, Any]) -> list[str]:
    out: list[str] = []
    s = r.get("scoring")
    if s:
        b = s["warm_breakdown_s"]
        out += [
            "",
            f"Where a warm scoring's {s['warm_s']:.1f} s go (medians; raw DuckDB for "
            f"the same queries: {s['raw_predicted_s']:.2f} s):",
            "",
            "| part | seconds |",
            "| --- | --- |",
            f"| executor: guarded run in a rolled-back transaction, Arrow batches "
            f"(`execute_s`) | {b['executor_run']:.2f} |",
            f"| comparator (`compare_s`) | {b['compare']:.2f} |",
            f"| rest of each instance: extraction, guard parse, logical-form match, "
            f"prepare | {b['rest_of_instance']:.2f} |",
            f"| outside instances: reading inputs, results.jsonl, summary, run folder "
            f"| {b['outside_instances']:.2f} |",
        ]
        if b["outside_instances"] < 0:
            out += [
                "",
                "The instances' own times overlap in the pipeline and add up to more "
                "than the wall time, so the last row is not a time; until 2026-12-02 "
                "(after 984a2d4) an instance's time also held its wait behind the "
                "queries sent to the query process before it.",
            ]
    c = r.get("comparator")
    if c:
        sizes = [str(n) for n in c["rows"]]
        big = sizes[-1]
        prev = sizes[-2] if len(sizes) > 2 else None
        head = " | ".join(f"{_rows_label(int(n))} s" for n in sizes)
        out += [
            "",
            f"Comparator seconds, {c['columns']} columns, rows shuffled (budget "
            f"{c['budget_seconds']:g} s per comparison):",
            "",
            f"| profile | {head} | naive / profile at {_rows_label(int(big))} | "
            f"growth {_rows_label(int(big))} / "
            f"{_rows_label(int(prev)) if prev else '-'} | verdict |",
            "| --- |" + " --- |" * (len(sizes) + 3),
        ]
        for p, by in c["cells"].items():
            cells = []
            for n in sizes:
                cell = by[n]
                if cell.get("skipped"):
                    pred = cell.get("predicted_seconds")
                    cells.append(f"skipped (~{_fmt(pred)} s)" if pred is not None else "killed")
                else:
                    cells.append(_fmt(cell["seconds"]))
            measured = [by[n] for n in sizes if not by[n].get("skipped")]
            verdict = (
                (
                    "match"
                    if all(x["match"] for x in measured)
                    else "no match: " + next(x["reason"] for x in measured if not x["match"])[:70]
                )
                if measured
                else "–"
            )
            sp = c["speedup_vs_naive_at_max"].get(p)
            gr = c["growth_max_over_previous"].get(p)
            if measured and not all(x["match"] for x in measured):
                sp = gr = None  # a refusal's time says nothing about comparing
            out.append(
                f"| {p} | {' | '.join(cells)} | {_fmt(sp) if p != 'naive' else '1'} | "
                f"{_fmt(gr)} | {verdict} |"
            )
    w = r.get("wide")
    if w:
        for variant, data in w["variants"].items():
            widths = [str(x) for x in w["widths"]]
            out += [
                "",
                f"Wide results, `{variant}`, {w['rows']:,} rows, seconds by column count:",
                "",
                "| profile | " + " | ".join(widths) + " | verdict |",
                "| --- |" + " --- |" * (len(widths) + 1),
            ]
            for p, by in data["cells"].items():
                vals = [
                    ("skipped" if by[k].get("skipped") else _fmt(by[k]["seconds"])) for k in widths
                ]
                measured = [by[k] for k in widths if not by[k].get("skipped")]
                verdict = (
                    (
                        "match"
                        if all(x["match"] for x in measured)
                        else "no match ("
                        + next(x["reason"] for x in measured if not x["match"])[:60]
                        + ")"
                    )
                    if measured
                    else "–"
                )
                out.append(f"| {p} | {' | '.join(vals)} | {verdict} |")
    cu = r.get("curation")
    if cu and cu.get("ratio") is not None:
        out += [
            "",
            "Curation by source:",
            "",
            "| source | records | kept | wall s | raw kept golds s | ratio | golds run | "
            "raw golds run s | ratio | records/s |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, e in cu["sources"].items():
            kept = e.get("kept", sum(x.get("kept", 0) for x in cu["sources"].values()))
            run = (
                f"{e['golds_run']} | {e['raw_run_s']:.3f} | {e['ratio_golds_run']:.1f}"
                if "raw_run_s" in e
                else "– | – | –"
            )
            out.append(
                f"| {name} | {e['records']} | {kept} | "
                f"{e['wall_s']:.2f} | {e['raw_s']:.3f} | {e['ratio']:.1f} | {run} | "
                f"{e['records_per_second']:.1f} |"
            )
        out += [
            "",
            "Required executions by kind, run bare on DuckDB (seconds, medians):",
            "",
            "| source | required s | golds s | answers s | NOCASE s | determinism s | "
            "curation / required |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for name, e in cu["sources"].items():
            if "required_s" not in e:
                continue
            out.append(
                f"| {name} | {e['required_s']:.3f} | {e['required_golds_s']:.3f} | "
                f"{e['required_answers_s']:.3f} | {e['required_nocase_s']:.3f} | "
                f"{e['required_determinism_s']:.3f} | {e['ratio_required']:.2f} |"
            )
        d = cu["diagnostic"]
        out += [
            "",
            f"Curation sent {d['executor_queries']} queries to the executor "
            f"({d['queries_per_kept_gold']:.1f} per kept gold), which spent "
            f"{d['executor_seconds']:.2f} s of {d['wall_seconds']:.2f} s inside "
            "them (instrumented pass, not timed).",
        ]
        if d.get("stage_seconds"):
            out += [
                "",
                "Seconds in each stage's functions in that pass (stages run on threads of "
                "their own and overlap: they add up to more than the wall time):",
                "",
                "| stage | seconds |",
                "| --- | --- |",
                *(f"| {k} | {v:.3f} |" for k, v in d["stage_seconds"].items()),
            ]
    ho = r.get("hostile")
    if ho and ho.get("runs"):
        out += [
            "",
            f"Attacks in the hostile run (timeout {ho['timeout_seconds']:g} s, memory "
            f"limit {ho['memory_limit']}; {ho['workers_replaced']:g} query processes "
            "killed or lost and replaced per run):",
            "",
            "| attack | outcomes | slowest s |",
            "| --- | --- | --- |",
        ]
        for name, outcomes in ho["outcomes_by_attack"].items():
            shown = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
            out.append(f"| {name} | {shown} | {ho['slowest_by_attack_s'][name]:.2f} |")
    for note in (cu or {}).get("notes", []):
        out.append(f"\nNote: {note}")
    return out


# -- docs/explanation/benchmarks.md ---------------------------------------------------

#: The page whose figures ``--readme`` rewrites: what follows its first "Measured " line
#: (its text above, what each figure is, is written by hand).
BENCHMARKS_PAGE = ROOT / "docs" / "explanation" / "benchmarks.md"

#: The detail tables the page shows under the figures (bench/latest.md has them all).
README_DETAILS = ("scoring", "comparator")


def update_readme(table: str) -> None:
    """Replace the figures of docs/explanation/benchmarks.md (from its first line starting
    with "Measured " to its end) with ``table`` and the Spark table (``bench/spark.md``)."""
    text = BENCHMARKS_PAGE.read_text(encoding="utf-8")
    match = re.search(r"^Measured ", text, flags=re.M)
    if not match:
        raise SystemExit(f"{BENCHMARKS_PAGE} has no line starting with 'Measured '")
    spark = ROOT / "bench" / "spark.md"
    if spark.is_file():  # written by bench_spark.py, which make bench runs after this
        table = table.rstrip() + "\n\n" + spark.read_text(encoding="utf-8").strip() + "\n"
    BENCHMARKS_PAGE.write_text(text[: match.start()] + table, encoding="utf-8")


# -- main ---------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.render:
        report = _from_json(json.loads(args.render.read_text(encoding="utf-8")))
        print(render(report))
        if args.readme:
            update_readme(render(report, README_DETAILS))
        return 0
    if not args.db.is_file():
        log(f"no database at {args.db}: run `make db` first")
        return 1
    started = time.perf_counter()
    at_start = machine()  # the code measured: bench_common's copy of src/
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="sqlgold-bench-") as tmp:
        work = Path(tmp)
        if "scoring" in args.only:
            folder = work / "scoring"
            folder.mkdir()
            results["scoring"] = bench_scoring.scoring_overhead(
                args.db, args.tasks, args.instances, args.runs, folder
            )
        if "comparator" in args.only:
            results["comparator"] = bench_compare.comparator_cost(args.rows, args.runs, args.budget)
        if "wide" in args.only:
            results["wide"] = bench_compare.wide_cost(
                args.wide_rows, [2, 6, 10, 14], args.runs, args.budget
            )
        if "curation" in args.only:
            folder = work / "curation"
            folder.mkdir()
            results["curation"] = bench_curation.curation_cost(
                args.db, args.querylibrary, args.source, args.runs, folder
            )
        if "curation_scaled" in args.only:
            folder = work / "curation_scaled"
            folder.mkdir()
            results["curation_scaled"] = bench_curation.curation_cost_scaled(
                args.db, args.querylibrary, args.source, args.runs, folder
            )
        if "curation_dqd" in args.only:
            folder = work / "curation_dqd"
            folder.mkdir()
            results["curation_dqd"] = bench_curation.dqd_throughput(
                args.db, args.dqd, args.runs, folder
            )
        if "memory" in args.only:
            results["memory"] = bench_scoring.peak_memory(
                args.db,
                args.tasks,
                args.memory_instances,
                args.runs,
                work,
                timeout=max(600.0, args.memory_instances * 0.1),
            )
        if "hostile" in args.only:
            results["hostile"] = bench_hostile.hostile_cost(
                args.db, args.tasks, args.hostile_instances, args.runs, work
            )
        if "startup" in args.only:
            folder = work / "startup"
            folder.mkdir()
            results["startup"] = bench_startup.startup_cost(
                args.db, args.source, max(args.runs, 5), folder
            )
        if "render" in args.only:
            results["render"] = bench_render.render_speed(args.runs, work, args.sqlrender_jar)
        if "curation_postgres" in args.only:
            folder = work / "curation_postgres"
            folder.mkdir()
            try:
                results["curation_postgres"] = bench_curation.curation_cost_postgres(
                    args.db, args.querylibrary, args.source, args.runs, folder, args.pg_url
                )
            except LookupError as e:  # no server binaries and no --pg-url
                results["curation_postgres"] = {"note": str(e)}
        if "postgres" in args.only:
            folder = work / "postgres"
            folder.mkdir()
            try:
                results["postgres"] = bench_postgres.postgres_overhead(
                    args.db, args.tasks, args.instances, args.runs, folder, args.pg_url
                )
            except LookupError as e:  # no server binaries and no --pg-url
                results["postgres"] = {"note": str(e)}
        if "one_prediction" in args.only:
            folder = work / "one_prediction"
            folder.mkdir()
            results["one_prediction"] = bench_one_prediction.duckdb_one_prediction(
                args.db, args.tasks, args.runs, folder
            )
            whole = work / "one_prediction_process"
            whole.mkdir()
            results["one_prediction"]["whole_process"] = bench_one_prediction.whole_process_figures(
                args.db, args.tasks, args.runs, whole
            )
        if "efficiency" in args.only:
            folder = work / "efficiency"
            folder.mkdir()
            results["efficiency"] = bench_efficiency.efficiency_spread(
                args.db, args.tasks, args.runs, folder
            )
        if args.profile_dir:
            bench_profile.write_profiles(
                args.db,
                args.tasks,
                args.instances,
                args.querylibrary,
                args.source,
                args.profile_dir,
                work,
            )
    report: dict[str, Any] = {
        "format": "sqlgold.bench/1",
        "date": dt.date.today().isoformat(),
        "machine": _code_check(at_start),
        "settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "bench_seconds": time.perf_counter() - started,
    }
    report["figures"] = headline(results, args.rows)
    report["results"] = results
    table = render(report)
    final = {**report["figures"], **{k: v for k, v in report.items() if k != "figures"}}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(_finite(final), indent=2, sort_keys=False) + "\n", encoding="utf-8"
    )
    args.out.with_suffix(".md").write_text(table, encoding="utf-8")
    print(table)
    if args.readme:
        update_readme(render(report, README_DETAILS))
    log(
        f"wrote {args.out} and {args.out.with_suffix('.md')} in "
        f"{report['bench_seconds'] / 60:.1f} min"
    )
    return 0


def _code_check(start: dict[str, Any]) -> dict[str, Any]:
    """Every figure measured the copy of src/ taken at the start; say if src/ moved on."""
    live = src_digest(SRC)
    measured = start["src_sha256"]
    if live != measured:
        log(
            "note: src/ changed while the bench ran; every figure measured the copy taken "
            f"at the start (commit {start['git_commit']}, src sha256 {measured[:12]})"
        )
    return {**start, "src_changed_during_run": live != measured}


def _from_json(data: dict[str, Any]) -> dict[str, Any]:
    """A written report back into the shape :func:`render` takes."""
    return {**data, "figures": headline(data["results"], data["settings"]["rows"])}


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: write null instead."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
