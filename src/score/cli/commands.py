"""``sqlgold score``: run, report and compare scoring runs (a thin layer over the library)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from click.core import ParameterSource

from score.cli.exit_codes import FOUND_DIFFERENT
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import (
    ProgressBar,
    bootstrap_options,
    database_options,
    executor_options,
    handle_errors,
    jobs_option,
    profile_option,
    quiet_option,
    split_options,
    sql_size_option,
    suite_option,
    take_executor_settings,
)
from score.defaults import DEFAULT_CACHE, SHOWN_GOLD_CACHE

#: sqlglot dialects predictions may be written in (``--dialect``).
PREDICTION_DIALECTS = (
    "duckdb",
    "postgres",
    "tsql",
    "spark",
    "databricks",
    "bigquery",
    "snowflake",
    "redshift",
    "sqlite",
    "mysql",
    "oracle",
    "trino",
)


@click.group("score", context_settings=HELP)
def score_group() -> None:
    """Score model predictions by running them, and report the scores."""


@score_group.command("run", context_settings=HELP)
@click.argument("tasks", type=click.Path(exists=True, path_type=Path))
@click.argument("predictions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@option(
    "--out",
    "Run folder: results.jsonl, summary.json, results.json, priors.json and the review page "
    "report.html.",
    required=True,
)
@profile_option("Comparison rule deciding 'the same result'.")
@option("--run")
@jobs_option("Instances scored in parallel (each in its own query process).")
@option("--resume", "Continue an interrupted run in --out.")
@option("--lenient", "Report bad prediction lines in the summary instead of stopping.")
@option("--cache", default=DEFAULT_CACHE, show_default=SHOWN_GOLD_CACHE)
@option("--no-cache")
@option(
    "--manifest",
    "A release's manifest.json (or folder): refuse TASKS if its items changed; its published "
    "split is the one scored.",
)
@option(
    "--split",
    "Which tasks to score: the held-out test split (the evaluation), the train split "
    "(tasks that may be shown to a model), or all; a TEXT-TO-OMOP result file's tasks are "
    "all its test set, so for one the default is all.",
)
@split_options(
    "For a task file without a release: the split's test fraction  [default: 0.5, "
    "as grounding and publish use].",
    seed_help="For a task file without a release: the split's seed  [default: 0].",
    fraction_default=None,
    seed_default=None,
)
@option(
    "--language",
    "Score only the questions in this language (repeatable; default: every language "
    "of the task set). The report says which were scored.",
    metavar="LANG",
)
@option(
    "--dialect",
    "The SQL dialect the predictions were written for, when not the engine's own "
    "(e.g. duckdb predictions scored on PostgreSQL): they are transpiled first.",
    type=click.Choice(PREDICTION_DIALECTS),
)
@option(
    "--efficiency",
    "Also measure the right answers' efficiency against their golds: BIRD's VES or "
    "R-VES (both queries timed in one query process, alternating), or VES on the ratio "
    "of EXPLAIN cost estimates (deterministic; DuckDB and PostgreSQL).",
)
@option(
    "--efficiency-runs",
    "Timed runs of each query per instance  [default: 10 for ves, 100 for rves, as "
    "BIRD; 1 for cost].",
)
@suite_option(
    "A test suite's folder (built for TASKS on this database): an instance is then "
    "correct only if it also matches its gold on every variant; the summary gives TS "
    "(test-suite accuracy) beside EX.",
    dest="suite",
)
@bootstrap_options
@database_options
@executor_options
@sql_size_option
@quiet_option
@handle_errors
def score_run(tasks, predictions, out, db_path, schema, quiet, **params):
    """Score PREDICTIONS (JSONL) against TASKS (a curated task file or a release folder)
    into --out.

    Each task runs under the day it was verified under, and its gold result is checked
    against the hash it was verified with: a difference is the outcome gold_drift, left
    out of every score.  Exit codes: 0 scored; 1 error; 3 scored, but some tasks are
    gold_drift (the database or engine is not the one the tasks were verified on).
    """
    from score.out_paths import check_output_dir, prior_folder
    from score.scoring.run_folder import RUN_FOLDER_FILES
    from score.scoring.run_lock import check_unlocked

    check_output_dir(out, stage="score")
    # a run there is continued (--resume) or refused by the run folder; anything else
    # sqlgold did not write is refused now
    prior_folder(out, names=RUN_FOLDER_FILES, what="a scoring run", stage="score")
    check_unlocked(out)  # another run writing --out: said at once, before any import or start
    from score.execution.processes import fork_server

    fork_server.start(db_path)  # its imports overlap with this process's
    from score.api import score_run as run_scoring
    from score.execution.arrow_pandas import answer_without_pandas

    if click.get_current_context().get_parameter_source("split") == ParameterSource.DEFAULT:
        params["split"] = None  # the library's choice: test, or all for a result file
    settings = take_executor_settings(params)
    progress, measuring = ProgressBar("scoring", quiet), ProgressBar("measuring", quiet)
    judging = ProgressBar("suite variants", quiet)

    def measured(done: int, total: int) -> None:
        progress.close()  # scoring is over: its bar's line ends before this one starts
        judging.close()
        measuring(done, total)

    def judged(done: int, total: int) -> None:
        progress.close()
        judging(done, total)

    answer_without_pandas()  # this process holds no pandas object (see the module)
    cache_dir, no_cache = params.pop("cache_dir"), params.pop("no_cache")
    try:
        outcome = run_scoring(
            tasks,
            predictions,
            out,
            db=db_path,
            schema=schema,
            run=params.pop("run_label"),
            languages=params.pop("languages") or None,
            cache=None if no_cache else cache_dir,
            settings=settings,
            progress=progress,
            measuring=measured,
            judging=judged,
            **params,
        )
    finally:
        progress.close()
        judging.close()
        measuring.close()
    s = outcome.summary
    low, high = s["ex_ci"] if s.get("ex_ci") else (None, None)
    click.echo(f"run          {s.get('run')}")
    click.echo(f"split        {outcome.split}")
    langs = s["languages"]
    chosen = " (chosen with --language)" if langs["chosen"] else ""
    click.echo(f"languages    {', '.join(langs['scored'])} of {', '.join(langs['all'])}{chosen}")
    click.echo(f"instances    {s['n_instances']}  (gold_drift {outcome.gold_drift})")
    click.echo(f"EX           {_fmt(s['ex'])}  [{_fmt(low)}, {_fmt(high)}]")
    if "ts" in s:
        ts_low, ts_high = s["ts_ci"] or (None, None)
        caught = s["suite"]["n_caught"]
        click.echo(
            f"TS           {_fmt(s['ts'])}  [{_fmt(ts_low)}, {_fmt(ts_high)}]  "
            f"({caught} right on the base database told apart by the suite's "
            f"{s['suite']['variants']} variant(s))"
        )
    click.echo("RS           " + "  ".join(f"RS({k}) {_fmt(v, 2)}" for k, v in s["rs"].items()))
    _echo_peer_scores(s)
    click.echo(f"gold queries executed {outcome.gold_executions} (the rest came from the cache)")
    click.echo(f"written      {out}")
    if s.get("input_problems"):
        click.echo(
            f"{len(s['input_problems'])} bad prediction line(s) skipped: see summary.json", err=True
        )
    for warning in outcome.warnings:
        click.echo(f"warning: {warning}", err=True)
    if outcome.gold_drift:
        sys.exit(FOUND_DIFFERENT)


def _fmt(value, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _echo_peer_scores(summary: dict) -> None:
    """TEXT-TO-OMOP's metrics and the efficiency score, when the run has them."""
    from score.report.peer_scores import summary_lines

    for line in summary_lines(summary):
        click.echo(line)


@score_group.command("report", context_settings=HELP)
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@option("--out", "Where report.md, chart.svg and report.html go (default: the run folder, if one).")
@handle_errors
def score_report(run_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Write report.md and chart.svg for one or more finished run folders, and for one
    run its review page report.html (every instance, openable; see docs/explanation/pages.md)."""
    from score.api import report_runs

    if out is None and len(run_dirs) > 1:
        raise click.UsageError("several run folders: say where the report goes with --out")
    written = report_runs(run_dirs, out)
    for summary in written.summaries:
        _echo_peer_scores(summary)
    click.echo(f"written      {written.markdown}")
    click.echo(f"written      {written.chart}")
    if written.page is not None:
        click.echo(f"written      {written.page}")


@score_group.command("compare", context_settings=HELP)
@click.argument(
    "run_dirs",
    metavar="RUN...",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@option(
    "--out",
    "Where the outputs go: for two runs comparison.json, report.md, chart.svg and "
    "report.html (default: RUN_A_vs_RUN_B beside RUN_A); for any number, leaderboard.json, "
    "leaderboard.md and leaderboard.html (required for more than two runs).",
)
@bootstrap_options
@option(
    "--brittleness",
    "Two runs only: B is A with its retrieved cases dropped: also report brittleness (seed 003).",
)
@handle_errors
def score_compare(
    run_dirs: tuple[Path, ...], out: Path | None, seed: int, resamples: int, brittleness: bool
) -> None:
    """Compare two or more runs on the same tasks.

    Two runs (A B): discordant counts, exact McNemar test and paired bootstrap intervals
    of every score's difference (report.html lists the discordant instances, each
    openable).  Any number of runs, two or more: a leaderboard (leaderboard.md and
    leaderboard.html): each run's EX, and TS when the runs were scored with a test
    suite, with bootstrap intervals and ranks (ties share a rank: 1, 2, 2, 4), and
    every pair tested with exact McNemar, the p-values Holm-corrected for the number of
    pairs."""
    from score.api import compare_runs, rank_runs

    if len(run_dirs) < 2:
        raise click.UsageError("give two or more run folders to compare")
    if len(run_dirs) > 2 and out is None:
        raise click.UsageError("more than two runs: say where the leaderboard goes with --out")
    if len(run_dirs) > 2 and brittleness:
        raise click.UsageError("--brittleness compares two runs (A with cases, B without)")
    if len(run_dirs) == 2:
        run_a, run_b = run_dirs
        comparison = compare_runs(
            run_a,
            run_b,
            out,
            seed=seed,
            resamples=resamples,
            brittleness=brittleness,
            leaderboard=True,
        )
        click.echo(f"A            {run_a}  (run {comparison.runs[0]})")
        click.echo(f"B            {run_b}  (run {comparison.runs[1]})")
        click.echo(f"b (A right, B wrong) {comparison.b}")
        click.echo(f"c (A wrong, B right) {comparison.c}")
        click.echo(f"McNemar p    {comparison.p_value:.4g}")
        again = "  (replaced the comparison written there before)" if comparison.replaced else ""
        click.echo(f"written      {comparison.out}{again}")
        board = comparison.leaderboard
        assert board is not None  # asked for
    else:
        assert out is not None
        board = rank_runs(run_dirs, out, seed=seed, resamples=resamples)
    from score.report.leaderboard_markdown import leaderboard_lines

    for line in leaderboard_lines(board.data):
        click.echo(line)
    again = "  (replaced the leaderboard written there before)"
    for path in (board.json, board.markdown, board.page):
        click.echo(f"written      {path}" + (again if board.replaced and len(run_dirs) > 2 else ""))
