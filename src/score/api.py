"""sqlgold's public Python API for scoring: score a predictions file, report and compare
runs, build a test suite.  ``import score`` gives these names (:data:`score.__all__`).

Every function takes the command line's defaults (``sqlgold score run --help`` ...):
the same database (the embedded one, built in the user's cache folder the first time),
the same limits and the same outputs, so a run made here and one made by the command are
byte-identical.  Settings files (``sqlgold.toml``) are the command line's: a library
caller passes what it wants.  Errors are :class:`score.errors.SqlgoldError`, naming the
file, line or task and the stage.

>>> import score
>>> run = score.score_run("omop_tasks.jsonl", "predictions.jsonl", "runs/zero")  # doctest: +SKIP
>>> run.ex, run.n_instances  # doctest: +SKIP
(0.61, 228)

This module imports nothing heavy: each function imports its machinery when called.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from score.defaults import DEFAULT_CACHE, DEFAULT_DB
from score.report.leaderboard_folder import Leaderboard  # imports nothing heavy

if TYPE_CHECKING:
    from score.execution.settings import ExecutorSettings

#: A progress callback: called with (done, total).
Progress = Callable[[int, int], None]

#: A database: a DuckDB file, a ``postgresql://`` URL or a Spark Connect ``sc://`` URL;
#: None is the embedded database (Synthea 1k in the user's cache folder).
Database = str | Path | None


def database(db: Database = None) -> str | Path:
    """The database ``db`` names, as the command line's ``--db`` reads it: a DuckDB file
    as a Path (None: the embedded one, built the first time it is needed), a server
    URL as text.  A URL sqlgold does not open is a :class:`~score.errors.SqlgoldError`."""
    from score.execution.engines.kinds import EngineKind, engine_kind

    if db is None:
        from score.cdm.embedded import ensure_embedded

        return ensure_embedded(DEFAULT_DB)
    if isinstance(db, Path) or engine_kind(str(db)) is EngineKind.DUCKDB:
        return Path(db)
    return str(db)


def limits(
    *,
    timeout: float = 30.0,
    max_rows: int = 10_000,
    memory_limit: str = "4GB",
    threads: int | None = None,
    today: dt.date | str | None = None,
    max_sql_bytes: int = 100_000,
) -> ExecutorSettings:
    """The limits and context every query runs under (``--timeout``, ``--max-rows``,
    ``--memory-limit``, ``--threads``, ``--today``, ``--max-sql-bytes``); ``today`` may
    be a date or its ISO text."""
    from score.execution.settings import ExecutorSettings

    if isinstance(today, str):
        today = dt.date.fromisoformat(today)
    return ExecutorSettings(
        timeout_seconds=timeout,
        max_rows=max_rows,
        memory_limit=memory_limit,
        threads=threads,
        today=today,
        max_sql_bytes=max_sql_bytes,
    )


@dataclass(frozen=True)
class ScoredRun:
    """A finished scoring run: its folder and its summary (``summary.json``)."""

    out: Path
    summary: dict[str, Any]
    split: str  # the split scored, described: "test (228 of 451 tasks; release)"
    gold_executions: int  # gold queries run (the rest came from the gold cache)
    warnings: tuple[str, ...]  # what a person should know (the command prints them)

    @property
    def ex(self) -> float | None:
        """Execution accuracy over the instances scored."""
        return self.summary["ex"]

    @property
    def ex_ci(self) -> tuple[float, float] | None:
        """EX's bootstrap interval."""
        ci = self.summary.get("ex_ci")
        return (ci[0], ci[1]) if ci else None

    @property
    def n_instances(self) -> int:
        return self.summary["n_instances"]

    @property
    def gold_drift(self) -> int:
        """Instances whose gold result is not the one their task was verified with
        (another database or engine): left out of every score."""
        return self.summary["outcomes"]["counts"].get("gold_drift", 0)

    def results(self) -> list[dict[str, Any]]:
        """Every instance's result (``results.jsonl``), in the run's order."""
        from score.scoring.run_folder import read_run

        return read_run(self.out)["records"]


def score_run(
    tasks: str | Path,
    predictions: str | Path,
    out: str | Path,
    *,
    db: Database = None,
    schema: str | None = None,
    profile: str = "sqlgold",
    run: str | None = None,
    split: str | None = None,
    test_fraction: float | None = None,
    split_seed: int | None = None,
    languages: Sequence[str] | None = None,
    dialect: str | None = None,
    manifest: str | Path | None = None,
    suite: str | Path | None = None,
    efficiency: str | None = None,
    efficiency_runs: int | None = None,
    jobs: int = 1,
    resume: bool = False,
    lenient: bool = False,
    cache: str | Path | None = DEFAULT_CACHE,
    seed: int = 0,
    resamples: int = 2000,
    settings: ExecutorSettings | None = None,
    progress: Progress | None = None,
    measuring: Progress | None = None,
    judging: Progress | None = None,
) -> ScoredRun:
    """Score ``predictions`` (JSONL) against ``tasks`` (a task file or a release folder)
    into the folder ``out``, as ``sqlgold score run`` does.

    ``split`` None scores the test split (all of a TEXT-TO-OMOP result file, whose
    tasks are all its test set); ``cache`` None neither reads nor writes the gold cache;
    ``lenient`` reports bad prediction lines instead of stopping; ``settings`` are the
    query limits (:func:`limits`; default: the command's).  ``progress`` reports the
    instances scored, ``measuring`` the efficiency measurement, ``judging`` the suite's
    variants.  A run whose tasks drifted (``gold_drift``) is returned, not raised: the
    command exits 3 for it.
    """
    from score.out_paths import check_output_dir, prior_folder
    from score.scoring.run_folder import RUN_FOLDER_FILES
    from score.scoring.run_lock import check_unlocked

    check_output_dir(out, stage="score")
    # a run there is continued (``resume``) or refused by the run folder; anything else
    # sqlgold did not write is refused now
    prior_folder(out, names=RUN_FOLDER_FILES, what="a scoring run", stage="score")
    check_unlocked(out)  # another run writing ``out``: said before anything opens
    from score.execution.processes import fork_server

    db_path = database(db)
    fork_server.start(db_path)  # its imports overlap with this process's
    from score.execution.executor import OpeningExecutor
    from score.execution.lanes import workers_for_scoring
    from score.scoring.run import ScoringOptions, run_scoring

    options = ScoringOptions(
        profile=profile,
        run=run,
        jobs=jobs,
        resume=resume,
        cache_dir=cache,
        strict=not lenient,
        seed=seed,
        resamples=resamples,
        manifest=manifest,
        split=split,
        test_fraction=test_fraction,
        split_seed=split_seed,
        dialect=dialect,
        languages=tuple(languages) if languages else None,
        efficiency=efficiency,
        efficiency_runs=efficiency_runs,
        suite=suite,
    )
    with OpeningExecutor(
        db_path, schema, settings or limits(), workers=workers_for_scoring(jobs)
    ) as opening:
        outcome = run_scoring(
            tasks,
            predictions,
            out,
            opening,
            options,
            progress=progress,
            measuring=measuring,
            judging=judging,
        )
    return ScoredRun(
        out=Path(out),
        summary=outcome.summary,
        split=outcome.split.describe() if outcome.split else "all",
        gold_executions=outcome.gold_executions,
        warnings=outcome.warnings,
    )


@dataclass(frozen=True)
class Report:
    """The report files written for one or more runs."""

    markdown: Path  # report.md
    chart: Path  # chart.svg
    page: Path | None  # report.html (one run only: every instance, openable)
    summaries: tuple[dict[str, Any], ...]  # the runs' summaries, in the order given


def report_runs(runs: Sequence[str | Path], out: str | Path | None = None) -> Report:
    """Write ``report.md`` and ``chart.svg`` for finished run folders (runs on the same
    database, tasks, profile, split and suite), and for one run its page ``report.html``,
    into ``out`` (default: the one run's folder), as ``sqlgold score report`` does."""
    from score.errors import ScoringError
    from score.files import write_atomic
    from score.out_paths import check_output_dir, prior_folder
    from score.pages.scoring_page import scoring_page
    from score.report.chart import render_chart
    from score.report.markdown import render_report
    from score.report.runs import meta_for, summaries_with_priors, tasks_of
    from score.scoring.run_folder import RUN_FOLDER_FILES, read_run

    run_dirs = [Path(r) for r in runs]
    if not run_dirs:
        raise ScoringError("no run folder to report", stage="report")
    if out is None:
        if len(run_dirs) > 1:
            raise ScoringError("several run folders: say where the report goes", stage="report")
        out = run_dirs[0]
    out = check_output_dir(out, stage="report")
    # a run folder's own report, or one written before, is replaced; nothing else is
    prior_folder(out, names=RUN_FOLDER_FILES, what="a run or its report", stage="report")
    read = [read_run(d) for d in run_dirs]
    summaries = summaries_with_priors(read)
    meta = meta_for(read, [str(d) for d in run_dirs])
    write_atomic(out / "report.md", render_report(summaries, meta=meta))
    write_atomic(out / "chart.svg", render_chart(summaries))
    page = None
    if len(read) == 1:
        page = out / "report.html"
        write_atomic(page, scoring_page(read[0], tasks_of(read[0]["meta"])))
    return Report(out / "report.md", out / "chart.svg", page, tuple(r["summary"] for r in read))


def rank_runs(
    runs: Sequence[str | Path],
    out: str | Path,
    *,
    seed: int = 0,
    resamples: int = 2000,
) -> Leaderboard:
    """Rank two or more finished runs on the same tasks into ``out``:
    ``leaderboard.json``, ``leaderboard.md`` and ``leaderboard.html``, as ``sqlgold score
    compare RUN... --out OUT`` does (with two runs the command also writes their
    comparison: :func:`compare_runs` with ``leaderboard=True``).  The runs must share
    their database, task set, profile and split (else a
    :class:`~score.errors.ScoringError` naming the run that differs)."""
    from score.report.leaderboard_folder import write_leaderboard

    return write_leaderboard(runs, out, seed=seed, resamples=resamples)


@dataclass(frozen=True)
class Comparison:
    """Two runs on the same tasks compared: the discordant counts, the exact McNemar test
    and the paired bootstrap intervals (``comparison.json`` holds all of it)."""

    out: Path
    runs: tuple[str | None, str | None]  # the two runs' labels (their ``run`` field)
    b: int  # instances A got right and B wrong
    c: int  # instances A got wrong and B right
    p_value: float  # exact McNemar
    data: dict[str, Any]  # comparison.json
    replaced: bool = False  # a comparison written there before was replaced
    leaderboard: Leaderboard | None = None  # the two runs' leaderboard, when asked for


def compare_runs(
    run_a: str | Path,
    run_b: str | Path,
    out: str | Path | None = None,
    *,
    seed: int = 0,
    resamples: int = 2000,
    brittleness: bool = False,
    leaderboard: bool = False,
) -> Comparison:
    """Compare two finished runs on the same tasks into ``out`` (default:
    ``RUN_A_vs_RUN_B`` beside ``run_a``): ``comparison.json``, ``report.md``,
    ``chart.svg`` and ``report.html``, as ``sqlgold score compare`` does.  With
    ``brittleness``, B is A with its retrieved cases dropped (seed 003); with
    ``leaderboard``, the two runs' leaderboard is written beside them (the command
    does: :func:`rank_runs`)."""
    from score.errors import ScoringError
    from score.files import write_all_atomic
    from score.out_paths import check_output_dir, prior_folder
    from score.pages.compare_page import compare_page
    from score.report.chart import render_chart
    from score.report.leaderboard_folder import leaderboard_files
    from score.report.markdown import render_report
    from score.report.runs import (
        COMPARISON_FILES,
        LEADERBOARD_FILES,
        meta_for,
        summaries_with_priors,
        tasks_of,
    )
    from score.scoring.run_folder import dumps, read_run
    from score.statistics.stats import compare_runs as compare_records

    run_a, run_b = Path(run_a), Path(run_b)
    out = Path(out) if out is not None else run_a.parent / f"{run_a.name}_vs_{run_b.name}"
    check_output_dir(out, stage="compare")
    # a folder of an earlier comparison (with or without its leaderboard) is replaced;
    # one that holds a leaderboard alone is told by its leaderboard.json
    alone = not (out / "comparison.json").exists() and (out / "leaderboard.json").exists()
    replaced = prior_folder(
        out,
        names=COMPARISON_FILES | LEADERBOARD_FILES,
        marker=("leaderboard.json", ("sqlgold.leaderboard/",))
        if alone
        else ("comparison.json", ("sqlgold.comparison/",)),
        what="a comparison",
        stage="compare",
    )
    a, b = read_run(run_a), read_run(run_b)
    meta = meta_for([a, b], [f"A {run_a}", f"B {run_b}"], suites_may_differ=True)
    try:
        comparison = compare_records(
            a["records"], b["records"], seed=seed, resamples=resamples, brittleness=brittleness
        )
        summaries = summaries_with_priors([a, b], comparison["bootstrap"])
        files = {  # every file made before any is written: all of them, or none
            out / "comparison.json": dumps(comparison),
            out / "report.md": render_report(summaries, comparison, meta=meta),
            out / "chart.svg": render_chart(summaries, comparison),
            out / "report.html": compare_page(a, b, comparison, tasks_of(a["meta"])),
        }
        board = {}
        if leaderboard:
            board_meta = meta_for([a, b], [str(run_a), str(run_b)], suites_may_differ=True)
            board = leaderboard_files(
                [a, b], [run_a, run_b], out, board_meta, seed=seed, resamples=resamples
            )
    except ValueError as e:
        raise ScoringError(str(e), stage="compare") from None
    write_all_atomic({**files, **board})
    labels = (a["meta"].get("run"), b["meta"].get("run"))
    return Comparison(
        out,
        labels,
        comparison["b"],
        comparison["c"],
        comparison["p_value"],
        comparison,
        bool(replaced),
        Leaderboard.written(out, board, bool(replaced)) if board else None,
    )


@dataclass(frozen=True)
class Suite:
    """A test suite built: its folder and its report (``suite.json``'s account of the
    variants, the near misses and the tasks it drops)."""

    out: Path
    report: dict[str, Any]
    replaced: bool = False  # a suite sqlgold built there before was replaced

    @property
    def variants(self) -> int:
        return len(self.report["variants"])

    @property
    def drops(self) -> dict[str, Any]:
        """Tasks whose gold and reference answer differ on a variant, by id."""
        return dict(self.report["drops"])


def build_suite(
    tasks: str | Path,
    out: str | Path,
    *,
    db: Database = None,
    schema: str | None = None,
    seed: int = 0,
    max_databases: int = 50,
    max_candidates: int = 3000,
    jobs: int = 1,
    profile: str = "sqlgold",
    timeout: float = 30.0,
    progress: Progress | None = None,
) -> Suite:
    """Build the test suite of ``tasks`` (a task file or a release folder) on the DuckDB
    database ``db`` into the folder ``out``, as ``sqlgold suite build`` does."""
    from score.errors import SqlgoldError
    from score.execution.engines.kinds import engine_kind
    from score.execution.settings import ExecutorSettings
    from score.inputs.task_set import open_task_set
    from score.out_paths import check_output_dir, prior_folder
    from score.suite.build import BuildSettings
    from score.suite.build import build_suite as build
    from score.suite.suite_file import MANIFEST, SUITE_FORMAT

    base = database(db)
    if not isinstance(base, Path):
        raise SqlgoldError(
            f"a suite is built on a DuckDB file, not on {engine_kind(base)}: its variants "
            "are DuckDB databases made with the base's schema, types and vocabulary",
            stage="suite",
        )
    check_output_dir(out, stage="suite")  # before any work: a folder we can write
    replaced = prior_folder(  # and one that holds nothing but a suite sqlgold built
        out,
        names=None,
        marker=(MANIFEST, (SUITE_FORMAT.split("/")[0] + "/",)),
        what="a test suite",
        stage="suite",
    )
    task_set = open_task_set(tasks)
    report = build(
        task_set.tasks,
        base,
        out,
        BuildSettings(seed, max_databases, max_candidates, jobs, profile),
        progress=progress,
        executor_settings=ExecutorSettings(timeout_seconds=timeout),
        schema=schema,
    )
    return Suite(Path(out), report, bool(replaced))
