"""Test suites (issue 27): what a suite costs to build and what it tells apart.

    .venv/bin/python bench/bench_suite.py [--db CDM.duckdb]

1. the shipped benchmark's suite, built with ``--jobs 2``: seconds, variants kept,
   candidates tried and rejected, the size of the suite folder;
2. near-miss survival: the one-edit neighbours of its golds that run on the base
   database, the share scored correct there alone and with the suite;
3. its reference answers (and, 4., the time of scoring them without and with the suite,
   warm caches, and EX and TS): the tasks whose gold and reference answer differ on a variant
   (the suite's drops; every other reference answer matches its gold on every variant),
   and the golds that failed on a candidate (such a candidate is never kept, so every
   gold runs on every variant); the near misses the build counts correct on the base
   database scored again as a model's answers by ``score run --suite``, which must
   count as the build's report does;
5. TEXT-TO-OMOP's whole test file (``../shared/corpora/text2omop/test.jsonl``, skipped when
   absent), imported as a maintainer would (every allow flag, ``--today 2026-01-01``):
   the same survival figures (near misses counted once per distinct gold), how many of
   its golds that return no row on the base database return rows on some variant, and
   the suite's reach (distinct golds with rows somewhere, near misses it cannot judge).

Targets (issue 56, which tightened issue 27's): near misses correct with the suite at
most 0.3% on the shipped benchmark (none bound to the vocabulary) and 10% on
TEXT-TO-OMOP's test file; no reference answer lost; the build of the shipped benchmark
under 5 minutes and of TEXT-TO-OMOP's whole file under 8, with 2 jobs; scoring with the
suite at most 3x without.
Figures go to ``bench/suite.json`` and ``bench/suite.md``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "data" / "benchmark" / "omop_tasks.jsonl"
TEXT2OMOP = ROOT.parent / "shared" / "corpora" / "text2omop" / "test.jsonl"
SQLGOLD = [sys.executable, "-m", "curate.cli"]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build(tasks: Path, db: Path, out: Path, jobs: int) -> dict:
    """``sqlgold suite build`` in a fresh process: its report and wall seconds."""
    started = time.perf_counter()
    subprocess.run(
        [
            *SQLGOLD,
            "suite",
            "build",
            str(tasks),
            "--out",
            str(out),
            "--db",
            str(db),
            "--jobs",
            str(jobs),
            "-q",
        ],
        check=True,
        cwd=ROOT,
    )
    seconds = time.perf_counter() - started
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {
        "seconds": round(seconds, 1),
        "variants": len(report["variants"]),
        "candidates_tried": report["candidates_tried"],
        "candidates_rejected": len(report["candidates_rejected"]),
        "suite_mb": round(folder_bytes(out) / 2**20, 2),
        "near_miss_survival": report["near_miss_survival"],
        "drops": report["drops"],
        "golds_failing_on_a_candidate": len(report["gold_failures_on_candidates"]),
        "golds_empty_on_base": report["golds_empty_on_base"],
        "golds_empty_on_base_filled_by_a_variant": report[
            "golds_empty_on_base_filled_by_a_variant"
        ],
        "tasks": sum(1 for t in report["tasks"] if "same_gold_as" not in t),  # distinct golds
        "reach": {k: v for k, v in report["reach"].items() if k != "tasks_empty_everywhere"},
        "near_miss_survival_issue_classes": issue_classes(report["near_miss_survival_by_edit"]),
        "near_miss_survival_by_edit": report["near_miss_survival_by_edit"],
        "equivalence_rules_refuted": len(report["equivalence_rules"]["refuted"]),
    }


#: the edit classes of issue 27's own measurement (8.6% of them correct on the base alone)
ISSUE_CLASSES = (
    "compare_flip",
    "compare_strict",
    "aggregate_swap",
    "limit_plus_1",
    "limit_minus_1",
    "drop_conjunct",
    "order_flip",
    "int_plus_1",
    "int_minus_1",
    "and_or",
    "in_not_in",
)


def issue_classes(by_edit: dict) -> dict:
    """Near-miss survival over the issue's own edit classes."""
    run = sum(by_edit.get(e, {}).get("executed", 0) for e in ISSUE_CLASSES)
    base = sum(by_edit.get(e, {}).get("correct_on_base", 0) for e in ISSUE_CLASSES)
    suite = sum(by_edit.get(e, {}).get("correct_with_suite", 0) for e in ISSUE_CLASSES)
    same = sum(by_edit.get(e, {}).get("equivalent_under_cdm", 0) for e in ISSUE_CLASSES)
    return {
        "executed": run,
        "correct_on_base": base,
        "correct_with_suite": suite,
        "base_only": base / run if run else 0.0,
        "with_suite": suite / run if run else 0.0,
        "equivalent_under_cdm": same,
        "not_equivalent_with_suite": (suite - same) / (run - same) if run > same else 0.0,
    }


def reference_predictions(tasks_path: Path, out: Path) -> Path:
    """Every answerable instance answered with its task's reference answer (else its
    gold), every unanswerable one with ABSTAIN, in a fenced block as a model writes."""
    sys.path.insert(0, str(ROOT / "src"))
    from score.inputs.task_set import load_tasks

    lines = []
    for task in load_tasks(tasks_path):
        sql = task.get("answer_sql") or task.get("gold_sql")
        for language in sorted(task.get("questions") or {"en": ""}):
            output = f"```sql\n{sql}\n```" if sql else "ABSTAIN"
            lines.append(
                json.dumps({"task_id": task["id"], "language": language, "output": output})
            )
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def score_run(
    tasks: Path, predictions: Path, out: Path, db: Path, cache: Path, *extra: str
) -> None:
    """``sqlgold score run`` of ``predictions`` over every split into ``out``, quietly;
    its exit code is not checked (3, a mismatch the suite found, is a result)."""
    subprocess.run(
        [
            *SQLGOLD,
            "score",
            "run",
            str(tasks),
            str(predictions),
            "--out",
            str(out),
            "--split",
            "all",
            "--db",
            str(db),
            "--cache",
            str(cache),
            "-q",
            *extra,
        ],
        cwd=ROOT,
        check=False,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def scoring_cost(tasks: Path, suite: Path, db: Path, work: Path, runs: int) -> dict:
    """Seconds of `score run` over the reference answers without and with the suite,
    gold caches warm (a first scoring of each fills them and builds the variants'
    databases), and their ratio; each the median of ``runs``."""
    predictions = reference_predictions(tasks, work / "references.jsonl")
    cache = work / "gold-cache"

    def once(name: str, *extra: str) -> float:
        out = work / f"run-{name}"
        started = time.perf_counter()
        score_run(tasks, predictions, out, db, cache, *extra)
        seconds = time.perf_counter() - started
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
        once.last = summary  # type: ignore[attr-defined]
        return seconds

    once("warm-base")
    once("warm-suite", "--suite", str(suite))
    without = sorted(once(f"base-{i}") for i in range(runs))[runs // 2]
    with_suite = sorted(once(f"suite-{i}", "--suite", str(suite)) for i in range(runs))[runs // 2]
    summary = once.last  # type: ignore[attr-defined]
    return {
        "seconds_without_suite": round(without, 2),
        "seconds_with_suite": round(with_suite, 2),
        "ratio": round(with_suite / without, 2),
        "ex": summary.get("ex"),
        "ts": summary.get("ts"),
    }


def near_misses_scored(tasks: Path, suite: Path, db: Path, work: Path) -> dict:
    """The near misses the build counted as correct on the base database, scored as a
    user scores a model's answers (``score run --suite``): how many come out ``correct``
    on the base database and with the suite, beside the build's own count of them.  One
    answer per (task, language): the k-th near miss of every task goes to round k, in
    the first language of its task."""
    sys.path.insert(0, str(ROOT / "src"))
    from score.inputs.task_set import load_tasks

    languages = {t["id"]: sorted(t.get("questions") or {"en": ""})[0] for t in load_tasks(tasks)}
    report = json.loads((suite / "report.json").read_text(encoding="utf-8"))
    rounds: list[list[dict]] = []
    equivalent: set[tuple[str, str]] = set()
    for task in report["tasks"]:
        if "same_gold_as" in task:  # its gold's near misses go with the first task asking it
            continue
        same = sorted(x["sql"] for x in task["indistinguishable"])
        equivalent |= {
            (task["id"], x["sql"]) for x in task["indistinguishable"] if x.get("equivalent")
        }
        for k, sql in enumerate(sorted(task["killed_by"]) + same):
            if k == len(rounds):
                rounds.append([])
            rounds[k].append({"task_id": task["id"], "language": languages[task["id"]], "sql": sql})
    counts = {"near_misses": 0, "correct_on_base": 0, "correct_with_suite": 0}
    plain = dict(counts)  # the same, without the equivalent ones
    for k, answers in enumerate(rounds):
        predictions = work / f"near-misses-{k}.jsonl"
        predictions.write_text("".join(json.dumps(a) + "\n" for a in answers), encoding="utf-8")
        out = work / f"run-near-misses-{k}"
        score_run(tasks, predictions, out, db, work / "gold-cache", "--suite", str(suite))
        sql = {(a["task_id"], a["language"]): a["sql"] for a in answers}
        for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            key = (record["task_id"], record["language"])
            if key not in sql:
                continue
            tallies = [counts] if (key[0], sql[key]) in equivalent else [counts, plain]
            for tally in tallies:
                tally["near_misses"] += 1
                tally["correct_on_base"] += bool(record.get("base_correct"))
                tally["correct_with_suite"] += record["outcome"] == "correct"
    survival = report["near_miss_survival"]
    return {
        **counts,
        "not_equivalent": plain,
        "build_correct_with_suite": survival["correct_with_suite"],
        "build_not_equivalent_correct_with_suite": survival["not_equivalent"]["correct_with_suite"],
        "rounds": len(rounds),
    }


def text2omop_tasks(db: Path, work: Path) -> Path:
    """TEXT-TO-OMOP's whole test file curated as a maintainer would bring it (issue 56):
    every task kept that runs (every allow flag), today pinned to 2026-01-01; a gold asked
    in several wordings is one gold to the build."""
    tasks = work / "text2omop_tasks.jsonl"
    subprocess.run(
        [
            *SQLGOLD,
            "curate",
            str(TEXT2OMOP),
            "--format",
            "text2omop",
            "--min-rows",
            "0",
            "--allow-all-zero",
            "--allow-ties",
            "--allow-unordered-limit",
            "--allow-window-ties",
            "--allow-unresolved-semantics",
            "--allow-current-date",
            "--today",
            "2026-01-01",
            "--db",
            str(db),
            "--out",
            str(tasks),
            "--report",
            str(work / "text2omop_report.json"),
            "-q",
        ],
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return tasks


#: the order the task sets are shown in (suite.json keeps its keys sorted)
SET_ORDER = ("shipped benchmark", "TEXT-TO-OMOP test")


def _in_order(sets: dict) -> dict:
    rank = {name: i for i, name in enumerate(SET_ORDER)}
    return dict(sorted(sets.items(), key=lambda item: rank.get(item[0], len(rank))))


def markdown(figures: dict) -> str:
    figures = {**figures, "sets": _in_order(figures["sets"])}
    lines = [
        "# Test suites",
        "",
        "| task set | golds | variants | candidates | build s | suite MB | near misses run "
        "| correct on base | correct with suite | of those, equivalent | near misses correct "
        "with suite | drops |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, f in figures["sets"].items():
        s = f["near_miss_survival"]
        lines.append(
            f"| {name} | {f['tasks']} | {f['variants']} | {f['candidates_tried']} | "
            f"{f['seconds']} | {f['suite_mb']} | {s['executed']} | "
            f"{s['correct_on_base']} ({100 * s['base_only']:.1f}%) | "
            f"{s['correct_with_suite']} ({100 * s['with_suite']:.1f}%) | "
            f"{s['equivalent_under_cdm']} | {s['not_equivalent']['correct_with_suite']} of "
            f"{s['not_equivalent']['executed']} ({100 * s['not_equivalent']['with_suite']:.1f}%) "
            f"| {len(f['drops'])} |"
        )
    lines += [
        "",
        "Equivalent: a rule of `score.suite.equivalence` shows the neighbour cannot change "
        "the result on a CDM that keeps its constraints (a required foreign key finds its "
        "row, a primary key is unique, set semantics) and no database told it apart; near "
        "misses are the other neighbours (the targets, at most 0.3% on the shipped benchmark "
        "and 10% on TEXT-TO-OMOP's, are on them). A neighbour "
        "a rule names that some database told apart counts as a near miss ("
        + ", ".join(
            f"{name}: {f['equivalence_rules_refuted']}" for name, f in figures["sets"].items()
        )
        + ").",
    ]
    lines.append("")
    for name, f in figures["sets"].items():
        i = f["near_miss_survival_issue_classes"]
        lines.append(
            f"{name}, the issue's edit classes only: {i['correct_on_base']} of {i['executed']} "
            f"correct on the base alone ({100 * i['base_only']:.1f}%), {i['correct_with_suite']} "
            f"with the suite ({100 * i['with_suite']:.1f}%; "
            f"{i['equivalent_under_cdm']} of them equivalent: near misses "
            f"{100 * i['not_equivalent_with_suite']:.1f}%)."
        )
        s = f["near_miss_survival"]
        lines.append(
            f"{name}: of the {s['not_equivalent']['correct_with_suite']} near misses correct "
            f"with the suite, {s.get('vocabulary_bound', 0)} are bound to the vocabulary: "
            "they read only the vocabulary, or their one edit changes which rows of a "
            "vocabulary table the query sees and both versions see the same ones of the "
            "vocabulary most variants share (the base database's, with the suite's local "
            "concepts), and no vocabulary variant told them apart either."
        )
        if "reach" in f:
            r = f["reach"]
            reached = r["distinct_golds"] - r["distinct_golds_empty_everywhere"]
            lines.append(
                f"{name}: {reached} of {r['distinct_golds']} distinct golds "
                f"({100 * reached / r['distinct_golds']:.1f}%) return rows on the base "
                f"database or some variant; the suite cannot judge the "
                f"{r['near_misses_unjudged']} surviving near misses of the "
                f"{r['distinct_golds_empty_everywhere']} others ("
                f"{100 * r['unjudged_share']:.1f}% of {r['near_misses']})."
            )
        lines.append(
            f"{name}: {f['golds_empty_on_base']} gold(s) return no row on the base database, "
            f"{f['golds_empty_on_base_filled_by_a_variant']} of them return rows on some "
            f"variant; {f['golds_failing_on_a_candidate']} gold(s) failed on some candidate "
            f"(never kept)."
        )
    lines.append("")
    if "scoring" in figures:
        c = figures["scoring"]
        lines.append(
            f"Scoring the shipped benchmark's reference answers, warm caches: "
            f"{c['seconds_without_suite']} s without the suite, {c['seconds_with_suite']} s "
            f"with it ({c['ratio']}x; target at most 3x); EX {c['ex']}, TS {c['ts']}"
            + (
                f" (measured again on {c['measured']['date']}, commit {c['measured']['commit']}, "
                f"with the suite built earlier, {c['measured']['variants']} variants)."
                if "measured" in c
                else "."
            )
        )
        lines.append("")
    if "near_misses_scored" in figures:
        n = figures["near_misses_scored"]
        lines.append(
            f"The shipped benchmark's near misses correct on the base database, scored as a "
            f"model's answers (`score run --suite`, {n['rounds']} runs of one near miss per "
            f"task): {n['correct_on_base']} of {n['near_misses']} correct on the base database, "
            f"{n['correct_with_suite']} with the suite ({n['not_equivalent']['correct_with_suite']}"
            f" not equivalent); the build's report counts {n['build_correct_with_suite']} "
            f"({n['build_not_equivalent_correct_with_suite']})."
        )
        lines.append("")
    for name, when in sorted(figures.get("measured_earlier", {}).items()):
        lines.append(f"{name}: measured earlier ({when}), not in the run that wrote this page.")
    lines.append(f"Machine: {figures['machine']}.")
    return "\n".join(lines) + "\n"


def scoring_again(args: argparse.Namespace) -> int:
    """Figure 4 measured again with the suite in ``args.scoring_only``; the build figures
    in ``args.out`` stay (a suite's build does not change with how it is scored)."""
    figures = json.loads(args.out.read_text(encoding="utf-8"))
    manifest = json.loads((args.scoring_only / "suite.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        log("scoring the reference answers without and with the suite")
        found = scoring_cost(args.tasks, args.scoring_only, args.db, Path(tmp), args.runs)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    found["measured"] = {
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit,
        "variants": len(manifest["variants"]),
    }
    figures["scoring"] = found
    args.out.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    text = markdown(figures)
    args.out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", type=Path, help="base database (default: the embedded one)")
    p.add_argument("--tasks", type=Path, default=TASKS)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "suite.json")
    p.add_argument(
        "--no-text2omop",
        action="store_true",
        help="skip figure 5 (TEXT-TO-OMOP), keeping its earlier figures in --out",
    )
    p.add_argument("--runs", type=int, default=3, help="timed scorings of figure 4")
    p.add_argument(
        "--scoring-only",
        type=Path,
        metavar="SUITE_DIR",
        help="measure figure 4 again with a suite built earlier for --tasks and keep the "
        "other figures of --out as they are",
    )
    args = p.parse_args(argv)
    if args.db is None:
        sys.path.insert(0, str(ROOT / "src"))
        from score.cdm.embedded import ensure_embedded

        args.db = Path(ensure_embedded())
    if args.scoring_only is not None:
        return scoring_again(args)
    import platform

    figures: dict = {
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores",
        "sets": {},
    }
    with tempfile.TemporaryDirectory(prefix="bench-suite-") as tmp:
        work = Path(tmp)
        log("building the shipped benchmark's suite")
        figures["sets"]["shipped benchmark"] = build(args.tasks, args.db, work / "suite", args.jobs)
        log("scoring the reference answers without and with the suite")
        figures["scoring"] = scoring_cost(args.tasks, work / "suite", args.db, work, args.runs)
        log("scoring the near misses as a model's answers with the suite")
        figures["near_misses_scored"] = near_misses_scored(
            args.tasks, work / "suite", args.db, work
        )
        if TEXT2OMOP.is_file() and not args.no_text2omop:
            log("building TEXT-TO-OMOP's suite")
            tasks = text2omop_tasks(args.db, work)
            figures["sets"]["TEXT-TO-OMOP test"] = build(tasks, args.db, work / "t2o", args.jobs)
        elif args.no_text2omop:
            log("TEXT-TO-OMOP skipped (--no-text2omop): its figures of --out are kept")
            earlier = json.loads(args.out.read_text(encoding="utf-8")) if args.out.is_file() else {}
            if "TEXT-TO-OMOP test" in earlier.get("sets", {}):
                figures["sets"]["TEXT-TO-OMOP test"] = earlier["sets"]["TEXT-TO-OMOP test"]
                figures["measured_earlier"] = {
                    "TEXT-TO-OMOP test": earlier.get("measured_earlier", {}).get(
                        "TEXT-TO-OMOP test", "an earlier run of bench_suite.py"
                    )
                }
        else:
            log(f"TEXT-TO-OMOP skipped ({TEXT2OMOP} absent)")
    args.out.write_text(json.dumps(figures, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    text = markdown(figures)
    args.out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
