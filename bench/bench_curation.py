"""Figures 4 and 8: curation throughput, its cost against raw execution of the kept golds,
and DataQualityDashboard's 2,533 check instances curated with ``--jobs 2``.

Each source is curated in-process with :func:`curate.write.curation.curate_to_files` (the
code ``sqlgold curate`` runs, default options: every reference rule on, the collation
check on, one job) into a temporary folder, on an Executor opened beforehand.  The raw
time is plain DuckDB (:class:`bench_common.RawDuckDB`) running each kept task's DuckDB
gold SQL once.  Unanswerable tasks have no gold and add nothing to the raw time, though
curation runs their empty-table and NULL-column checks.

A second raw time runs once every gold curation had to run, kept or not: a gold dropped
for its result (empty, too many rows, all zero, a second run that differs, its answer
that differs ...) ran before it was dropped, and no curation can tell without running
it.  Golds dropped before running (unread, or by a rule of the query text alone:
:data:`DROPPED_UNRUN`) are not in it.  The figure's target stays on the kept golds.

The figure's ratio is curation's wall time over its **required executions** run bare
on the same engine (:func:`required_queries`): each gold curation had to run, each
reference answer it compared, the NOCASE rerun of each gold whose transpile warns about
text comparison, and the determinism rerun of each gold whose plan can vary, every one
run once on plain DuckDB (a NOCASE rerun on a connection with ``default_collation =
'nocase'``).  No curation can do with fewer executions; everything above them
(rendering, transpiling, the query processes, the checks, writing) is overhead.

One more, untimed, pass counts the requests curation sends to the executor's query
processes and the time they take (by wrapping ``Executor.call`` in this process only),
and the seconds spent in each stage's functions (:class:`_StageClock`; stages overlap
on their threads, so they add up to more than the wall time), to show where curation
time goes; it is not used for any ratio.
"""

from __future__ import annotations

import resource
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench_common import ROOT, RawDuckDB, log, median, timed
from replicate import replicate_cdm

from curate.write.curation import curate_to_files
from score.execution.executor import Executor

OWN_SOURCE = ROOT / "data" / "benchmark" / "omop_source.jsonl"
QUERYLIBRARY = ROOT.parent / "shared" / "querylibrary" / "queries"


def sources(querylibrary: Path, own: Path) -> tuple[list[tuple[str, Path, str]], list[str]]:
    """The (name, path, format) sources present, and notes about those that are not."""
    found, notes = [], []
    if querylibrary.is_dir():
        found.append(("querylibrary", querylibrary, "querylibrary"))
    else:
        notes.append(f"OHDSI QueryLibrary pages not found at {querylibrary}: skipped")
    if own.is_file():
        found.append(("omop_source", own, "jsonl"))
    else:
        notes.append(f"{own} not found: skipped")
    return found, notes


#: Verify-stage drops decided before the gold runs: the guard's, and the rules of the query
#: text alone (``curate.verify.reference_rules.check_query_rules``).
DROPPED_UNRUN = frozenset({"single_select", "no_current_date", "limit_needs_order"})


def golds_that_ran(path: Path, fmt: str, run) -> list[str]:
    """The DuckDB SQL of every gold curation ran in ``run`` (a curation of ``path``): the
    kept tasks' golds, and the golds of records dropped at the verify or answer stage by
    a rule decided after the gold ran, read again as curation read them."""
    from curate.reading.gold import read_gold
    from curate.sources.load import load_sources
    from curate.transpile.to_duckdb import Transpiled

    ran = [t["gold_sql"] for t in run.tasks if t["gold_sql"]]
    dropped_after = {
        r["id"]
        for r in run.report["records"]
        if r["status"] == "dropped"
        and r.get("stage") in ("verify", "answer")
        and r.get("rule") not in DROPPED_UNRUN
    }
    records, _ = load_sources(path, fmt)
    for record in records:
        if record.id in dropped_after:
            _, _, gold = read_gold(record)
            if isinstance(gold, Transpiled):
                ran.append(gold.sql)
    return ran


def required_queries(path: Path, fmt: str, run) -> dict[str, list[str]]:
    """The executions curation of ``path`` could not do without (``run``: a curation of
    it), as DuckDB SQL by kind: ``golds`` (:func:`golds_that_ran`), ``answers`` (each
    reference answer compared: kept tasks', and those dropped for differing), ``nocase``
    (each gold run again under a case-insensitive collation: its transpile warned about
    text comparison, grouping or sorting) and ``determinism`` (each gold whose plan can
    vary, run a second time)."""
    from curate.reading.gold import read_gold, to_duckdb
    from curate.sources.load import load_sources
    from curate.transpile.to_duckdb import Transpiled
    from curate.verify.reference_rules import draws_at_random, may_vary
    from curate.verify.semantics import collation_warned
    from score.execution.guard import check_statement
    from score.execution.result import QueryError

    golds = golds_that_ran(path, fmt, run)
    statuses = {r["id"]: r for r in run.report["records"]}
    records, _ = load_sources(path, fmt)
    answers, nocase, determinism = [], [], []
    for record in records:
        entry = statuses.get(record.id, {})
        ran = entry.get("status") == "kept" or (
            entry.get("stage") in ("verify", "answer") and entry.get("rule") not in DROPPED_UNRUN
        )
        if not ran or not record.answerable:
            continue
        _, rendered, gold = read_gold(record)
        if not isinstance(gold, Transpiled):
            continue
        if collation_warned(gold.warnings) and record.gold_dialect in ("tsql", "ohdsi", "auto"):
            nocase.append(gold.sql)
        try:
            tree = check_statement(gold.sql)
        except QueryError:
            tree = None
        if tree is not None and may_vary(tree, order_matters=False) and not draws_at_random(tree):
            determinism.append(gold.sql)
        compared = entry.get("status") == "kept" or entry.get("rule") == "answer_matches"
        if compared and rendered is not None and rendered.answer_sql:
            answer = to_duckdb(rendered.answer_sql, rendered.answer_dialect, "answer_sql")
            if isinstance(answer, Transpiled):
                answers.append(answer.sql)
    return {"golds": golds, "answers": answers, "nocase": nocase, "determinism": determinism}


class RawNocase(RawDuckDB):
    """Plain DuckDB under a case-insensitive collation, as the collation check runs."""

    def __init__(self, db_path: str | Path) -> None:
        super().__init__(db_path)
        self.con.execute("SET default_collation = 'nocase'")


def required_seconds(raw: RawDuckDB, nocase: RawDuckDB, queries: dict[str, list[str]]) -> dict:
    """Seconds plain DuckDB takes to run each required execution once, by kind."""
    out = {
        kind: raw_seconds(nocase if kind == "nocase" else raw, sqls)
        for kind, sqls in queries.items()
    }
    out["all"] = sum(out.values())
    return out


class _StageClock:
    """Seconds spent in each curation stage's functions (wrapped in this process only)."""

    P = "curate.pipeline"
    STAGES = {
        "read (render, transpile)": [("curate.reading.ahead", "read_record"), (P, "read_record")],
        "verify (gold, rules, collation)": [(P, "verify_gold")],
        "alternatives": [(P, "verify_alternatives")],
        "answer (read, compare)": [(P, "start_answer"), (P, "check_answer")],
        "smells": [(P, "check_smells")],
        "advisories": [(P, "advisories")],
        "tier": [(P, "classify_tier"), (P, "extract_features"), (P, "task_record")],
        "validate": [(P, "validated")],
        "curate_records (all stages)": [("curate.write.curation", "curate_records")],
    }

    def __init__(self) -> None:
        import threading

        self.seconds: dict[str, float] = {name: 0.0 for name in self.STAGES}
        self._lock = threading.Lock()
        self._saved: list[tuple[object, str, object]] = []

    def __enter__(self) -> _StageClock:
        import importlib

        for stage, targets in self.STAGES.items():
            for module_name, attr in targets:
                module = importlib.import_module(module_name)
                original = getattr(module, attr, None)
                if original is None:
                    continue
                self._saved.append((module, attr, original))
                setattr(module, attr, self._timed(stage, original))
        return self

    def _timed(self, stage: str, fn):
        clock = self

        def timed_call(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                with clock._lock:
                    clock.seconds[stage] += time.perf_counter() - start

        return timed_call

    def __exit__(self, *exc: object) -> None:
        for module, attr, original in reversed(self._saved):
            setattr(module, attr, original)


def raw_seconds(raw: RawDuckDB, sqls: list[str]) -> float:
    """Seconds plain DuckDB takes to run each of ``sqls`` once; a query that fails costs
    what it took to fail."""
    import duckdb

    start = time.perf_counter()
    for sql in sqls:
        try:
            raw.run(sql)
        except duckdb.Error:
            pass
    return time.perf_counter() - start


def _curate(path: Path, fmt: str, ex: Executor, folder: Path):
    return curate_to_files(
        path, fmt, ex, out=folder / "tasks.jsonl", report_path=folder / "report.json"
    )


class _QueryCounter:
    """Counts executor requests and the seconds spent inside ``Executor.call``."""

    def __init__(self) -> None:
        self.queries = 0
        self.seconds = 0.0

    def __enter__(self) -> _QueryCounter:
        self._original = Executor.call
        counter = self

        def counting(ex: Executor, request, **kwargs):
            start = time.perf_counter()
            try:
                return counter._original(ex, request, **kwargs)
            finally:
                counter.queries += 1
                counter.seconds += time.perf_counter() - start

        Executor.call = counting
        return self

    def __exit__(self, *exc: object) -> None:
        Executor.call = self._original


def curation_cost(db: Path, querylibrary: Path, own: Path, runs: int, work: Path) -> dict:
    found, notes = sources(querylibrary, own)
    for note in notes:
        log(f"curation: {note}")
    out: dict[str, Any] = {"runs": runs, "notes": notes, "sources": {}}
    if not found:
        out["ratio"] = None
        return out
    raw = RawDuckDB(db)
    raw_nocase = RawNocase(db)
    per_run: list[dict[str, dict[str, float]]] = []
    kept_golds: dict[str, list[str]] = {}
    ran_golds: dict[str, list[str]] = {}
    required: dict[str, dict[str, list[str]]] = {}
    with Executor(db) as ex:
        for name, path, fmt in found:  # warm-up, and the kept golds
            folder = work / f"curate-warmup-{name}"
            run = _curate(path, fmt, ex, folder)
            kept_golds[name] = [t["gold_sql"] for t in run.tasks if t["gold_sql"]]
            ran_golds[name] = golds_that_ran(path, fmt, run)
            required[name] = required_queries(path, fmt, run)
            statuses = Counter(r["status"] for r in run.report["records"])
            out["sources"][name] = {
                "path": str(path),
                "format": fmt,
                "records": sum(statuses.values()),
                "kept": statuses.get("kept", 0),
                "dropped": statuses.get("dropped", 0),
                "kept_golds": len(kept_golds[name]),
                "golds_run": len(ran_golds[name]),
                "required": {kind: len(q) for kind, q in required[name].items()},
            }
            raw.run_all(kept_golds[name])
            raw_seconds(raw, ran_golds[name])
            required_seconds(raw, raw_nocase, required[name])
        counts = ", ".join(
            f"{n} {s['records']} records ({s['kept']} kept)" for n, s in out["sources"].items()
        )
        log(f"curation: {counts}, {runs} runs")
        for i in range(runs):
            row: dict[str, dict[str, float]] = {}
            for name, path, fmt in found:
                folder = work / f"curate-{i}-{name}"
                wall, _ = timed(
                    lambda path=path, fmt=fmt, folder=folder: _curate(path, fmt, ex, folder)
                )
                need = required_seconds(raw, raw_nocase, required[name])
                row[name] = {
                    "wall_s": wall,
                    "raw_s": raw.run_all(kept_golds[name]),
                    "raw_run_s": raw_seconds(raw, ran_golds[name]),
                    "required_s": need["all"],
                    **{f"required_{k}_s": v for k, v in need.items() if k != "all"},
                }
            row["all"] = {
                key: sum(r[key] for r in row.values()) for key in next(iter(row.values()))
            }
            per_run.append(row)
            log(
                f"  run {i + 1}: "
                + ", ".join(
                    f"{n} {r['wall_s']:.2f} s / required executions {r['required_s']:.3f} s"
                    f" = x{r['wall_s'] / r['required_s']:.2f}"
                    for n, r in row.items()
                )
            )
        with _QueryCounter() as counter, _StageClock() as stages:  # untimed diagnostic pass
            start = time.perf_counter()
            for name, path, fmt in found:
                _curate(path, fmt, ex, work / f"curate-count-{name}")
            wall = time.perf_counter() - start
    raw.close()
    raw_nocase.close()
    names = [n for n, _, _ in found] + ["all"]
    records = {n: out["sources"][n]["records"] for n, _, _ in found}
    records["all"] = sum(records.values())
    for n in names:
        entry = out["sources"].setdefault(n, {"records": records["all"]})
        entry["wall_s"] = median(r[n]["wall_s"] for r in per_run)
        entry["raw_s"] = median(r[n]["raw_s"] for r in per_run)
        entry["ratio"] = median(r[n]["wall_s"] / r[n]["raw_s"] for r in per_run)
        entry["raw_run_s"] = median(r[n]["raw_run_s"] for r in per_run)
        entry["ratio_golds_run"] = median(r[n]["wall_s"] / r[n]["raw_run_s"] for r in per_run)
        entry["records_per_second"] = median(records[n] / r[n]["wall_s"] for r in per_run)
        entry["required_s"] = median(r[n]["required_s"] for r in per_run)
        entry["ratio_required"] = median(r[n]["wall_s"] / r[n]["required_s"] for r in per_run)
        for kind in ("golds", "answers", "nocase", "determinism"):
            entry[f"required_{kind}_s"] = median(r[n][f"required_{kind}_s"] for r in per_run)
    out["sources"]["all"]["kept_golds"] = sum(len(g) for g in kept_golds.values())
    out["sources"]["all"]["golds_run"] = sum(len(g) for g in ran_golds.values())
    out["sources"]["all"]["required"] = {
        kind: sum(out["sources"][n]["required"][kind] for n, _, _ in found)
        for kind in ("golds", "answers", "nocase", "determinism")
    }
    out["ratio"] = out["sources"]["all"]["ratio"]
    out["ratio_required"] = out["sources"]["all"]["ratio_required"]
    out["ratio_required_shipped"] = out["sources"].get("omop_source", {}).get("ratio_required")
    out["ratio_golds_run"] = out["sources"]["all"]["ratio_golds_run"]
    out["records_per_second"] = out["sources"]["all"]["records_per_second"]
    out["diagnostic"] = {
        "executor_queries": counter.queries,
        "executor_seconds": counter.seconds,
        "wall_seconds": wall,
        "kept_golds": out["sources"]["all"]["kept_golds"],
        "queries_per_kept_gold": counter.queries / max(1, out["sources"]["all"]["kept_golds"]),
        "stage_seconds": {k: round(v, 4) for k, v in stages.seconds.items()},
    }
    out["per_run"] = per_run
    return out


#: Figure 4's scaled row: the CDM replicated this many times (persons and their rows).
SCALE = 20


def curation_cost_scaled(
    db: Path, querylibrary: Path, own: Path, runs: int, work: Path, factor: int = SCALE
) -> dict:
    """:func:`curation_cost` on ``db`` replicated ``factor`` times
    (:func:`replicate.replicate_cdm`): each gold reads ``factor`` times the rows, so the
    ratio shows how much of figure 4's is a fixed cost per record and how much is the
    executions curation adds to each gold's."""
    big = work / f"cdm_x{factor}.duckdb"
    log(f"curation: replicating the CDM {factor}x")
    replicate_cdm(db, big, factor)
    try:
        out = curation_cost(big, querylibrary, own, runs, work)
    finally:
        big.unlink(missing_ok=True)
    out["factor"] = factor
    return out


DQD = ROOT.parent / "shared" / "corpora" / "dqd.jsonl"


def _cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the worker processes)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def dqd_throughput(db: Path, dqd: Path, runs: int, work: Path, jobs: int = 2) -> dict:
    """Figure 8: DataQualityDashboard's check instances curated with ``jobs`` worker processes.

    ``curate_to_files(..., jobs=jobs)`` end to end (import, every stage, both reports),
    default options, on an Executor opened beforehand; each run starts its own worker
    processes, as ``sqlgold curate --jobs 2`` does.  Records per second over wall time,
    and the CPU seconds of this process and its workers.
    """
    out: dict[str, Any] = {"path": str(dqd), "jobs": jobs, "runs": runs, "notes": []}
    if not dqd.is_file():
        out["notes"].append(f"DataQualityDashboard corpus not found at {dqd}: skipped")
        log(f"curation_dqd: {out['notes'][0]}")
        out["records_per_second"] = None
        return out
    walls, cpus = [], []
    with Executor(db) as ex:
        for i in range(runs):
            folder = work / f"dqd-{i}"
            cpu = _cpu_seconds()
            wall, run = timed(
                lambda folder=folder: curate_to_files(
                    dqd,
                    "jsonl",
                    ex,
                    out=folder / "tasks.jsonl",
                    report_path=folder / "report.json",
                    jobs=jobs,
                )
            )
            walls.append(wall)
            cpus.append(_cpu_seconds() - cpu)
            counts = run.report["counts"]
            out.update(records=counts["records"], kept=counts["kept"], dropped=counts["dropped"])
            log(
                f"  curation_dqd run {i + 1}: {counts['records']} records "
                f"({counts['kept']} kept) in {wall:.1f} s, {counts['records'] / wall:.1f} "
                f"records/s, {cpus[-1]:.1f} CPU s"
            )
    out["wall_s"] = median(walls)
    out["cpu_s"] = median(cpus)
    out["records_per_second"] = median(out["records"] / w for w in walls)
    out["records_per_cpu_second"] = median(out["records"] / c for c in cpus)
    out["per_run"] = [{"wall_s": w, "cpu_s": c} for w, c in zip(walls, cpus, strict=True)]
    return out


def curation_cost_postgres(
    db: Path, querylibrary: Path, own: Path, runs: int, work: Path, pg_url: str | None
) -> dict:
    """Figure 4 on PostgreSQL: the same sources curated with ``--db postgresql://...``.

    A throwaway server (or ``--pg-url``) holding the embedded CDM (``sqlgold db load``);
    curation through an Executor opened as ``sqlgold_reader`` (golds transpiled to
    PostgreSQL by the executor, as ``sqlgold curate`` does); raw time: plain psycopg
    running each kept gold, transpiled to PostgreSQL SQL, once.
    """
    from bench_postgres import RawPostgres, _server

    from curate.database.load import load_into_postgres
    from score.execution.engines.postgres_sql import transpile_to_postgres

    found, notes = sources(querylibrary, own)
    out: dict[str, Any] = {"runs": runs, "notes": notes, "sources": {}}
    admin, stop = _server(pg_url)
    try:
        reader = load_into_postgres(admin, db).reader_url
        raw = RawPostgres(reader)
        with Executor(reader, sql_dialect="duckdb") as ex:
            golds: dict[str, list[str]] = {}
            for name, path, fmt in found:  # warm-up, and the kept golds
                run = _curate(path, fmt, ex, work / f"pg-warmup-{name}")
                golds[name] = [
                    transpile_to_postgres(t["gold_sql"]) for t in run.tasks if t["gold_sql"]
                ]
                out["sources"][name] = {
                    "records": run.report["counts"]["records"],
                    "kept": run.report["counts"]["kept"],
                }
                raw.run_all(golds[name])
            per_run = []
            for i in range(runs):
                row = {}
                for name, path, fmt in found:
                    folder = work / f"pg-{i}-{name}"
                    wall, _ = timed(
                        lambda path=path, fmt=fmt, folder=folder: _curate(path, fmt, ex, folder)
                    )
                    raw_s, _, _ = raw.clocked(golds[name])
                    row[name] = {"wall_s": wall, "raw_s": raw_s}
                row["all"] = {k: sum(r[k] for r in row.values()) for k in ("wall_s", "raw_s")}
                per_run.append(row)
                log(
                    f"  curation on PostgreSQL run {i + 1}: "
                    + ", ".join(
                        f"{n} {r['wall_s']:.1f} s / raw {r['raw_s']:.2f} s" for n, r in row.items()
                    )
                )
        raw.close()
    finally:
        stop()
    for name in [n for n, _, _ in found] + ["all"]:
        entry = out["sources"].setdefault(name, {})
        entry["wall_s"] = median(r[name]["wall_s"] for r in per_run)
        entry["raw_s"] = median(r[name]["raw_s"] for r in per_run)
        entry["ratio"] = median(r[name]["wall_s"] / r[name]["raw_s"] for r in per_run)
    out["ratio"] = out["sources"]["all"]["ratio"]
    out["per_run"] = per_run
    return out
