"""``sqlgold score``: run, report and compare scoring runs (a thin layer over the library)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from click.core import ParameterSource

from score.cli.exit_codes import FOUND_DIFFERENT
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
from score.defaults import DEFAULT_CACHE
from score.errors import ScoringError

if TYPE_CHECKING:
    from score.scoring.run import ScoringOptions

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


def _scoring_options(params: dict) -> ScoringOptions:
    """``score run``'s options (what is left of its parameters) as the library's."""
    from score.scoring.run import ScoringOptions

    no_cache, lenient = params.pop("no_cache"), params.pop("lenient")
    cache_dir = params.pop("cache_dir")
    return ScoringOptions(
        run=params.pop("run_label"),
        languages=tuple(params.pop("languages")) or None,
        cache_dir=None if no_cache else cache_dir,
        strict=not lenient,
        **params,
    )


@click.group("score")
def score_group() -> None:
    """Score model predictions by running them, and report the scores."""


@score_group.command("run")
@click.argument("tasks", type=click.Path(exists=True, path_type=Path))
@click.argument("predictions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Run folder: results.jsonl, summary.json, results.json, priors.json and the "
    "review page report.html.",
)
@profile_option("Comparison rule deciding 'the same result'.")
@click.option(
    "--run", "run_label", default=None, help="Score only the predictions with this run label."
)
@jobs_option("Instances scored in parallel (each in its own query process).")
@click.option("--resume", is_flag=True, help="Continue an interrupted run in --out.")
@click.option(
    "--lenient",
    is_flag=True,
    help="Report bad prediction lines in the summary instead of stopping.",
)
@click.option(
    "--cache",
    "cache_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_CACHE,
    show_default=True,
    help="Gold result cache folder.",
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the gold cache.")
@click.option(
    "--manifest",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A release's manifest.json (or folder): refuse TASKS if its items changed; "
    "its published split is the one scored.",
)
@click.option(
    "--split",
    type=click.Choice(["test", "train", "all"]),
    default="test",
    show_default=True,
    help="Which tasks to score: the held-out test split (the evaluation), the train split "
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
@click.option(
    "--language",
    "languages",
    multiple=True,
    metavar="LANG",
    help="Score only the questions in this language (repeatable; default: every language "
    "of the task set). The report says which were scored.",
)
@click.option(
    "--dialect",
    type=click.Choice(PREDICTION_DIALECTS),
    default=None,
    help="The SQL dialect the predictions were written for, when not the engine's own "
    "(e.g. duckdb predictions scored on PostgreSQL): they are transpiled first.",
)
@click.option(
    "--efficiency",
    type=click.Choice(["ves", "rves", "cost"]),
    default=None,
    help="Also measure the right answers' efficiency against their golds: BIRD's VES or "
    "R-VES (both queries timed in one query process, alternating), or VES on the ratio "
    "of EXPLAIN cost estimates (deterministic; DuckDB and PostgreSQL).",
)
@click.option(
    "--efficiency-runs",
    type=click.IntRange(1),
    default=None,
    help="Timed runs of each query per instance  [default: 10 for ves, 100 for rves, as "
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
    from score.execution.arrow_pandas import answer_without_pandas
    from score.execution.executor import OpeningExecutor
    from score.execution.lanes import workers_for_scoring

    if click.get_current_context().get_parameter_source("split") == ParameterSource.DEFAULT:
        params["split"] = None  # the library's choice: test, or all for a result file
    settings = take_executor_settings(params)
    options = _scoring_options(params)
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
    # the database opens, and the query processes start, while sqlgold's scoring modules
    # are imported and the inputs read
    with OpeningExecutor(
        db_path, schema, settings, workers=workers_for_scoring(options.jobs)
    ) as opening:
        from score.scoring.run import run_scoring

        try:
            outcome = run_scoring(
                tasks,
                predictions,
                out,
                opening,
                options,
                progress=progress,
                measuring=measured,
                judging=judged,
            )
        finally:
            progress.close()
            judging.close()
            measuring.close()
    s = outcome.summary
    low, high = s["ex_ci"] if s.get("ex_ci") else (None, None)
    click.echo(f"run          {s.get('run')}")
    click.echo(f"split        {outcome.split.describe() if outcome.split else 'all'}")
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


@score_group.command("report")
@click.argument(
    "run_dirs",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where report.md, chart.svg and report.html go (default: the run folder, if one).",
)
@handle_errors
def score_report(run_dirs: tuple[Path, ...], out: Path | None) -> None:
    """Write report.md and chart.svg for one or more finished run folders, and for one
    run its review page report.html (every instance, openable; see docs/pages.md)."""
    from score.cli.run_reports import meta_for, summaries_with_priors, tasks_of
    from score.files import write_atomic
    from score.out_paths import check_output_dir, prior_folder
    from score.pages.scoring_page import scoring_page
    from score.report.chart import render_chart
    from score.report.markdown import render_report
    from score.scoring.run_folder import RUN_FOLDER_FILES, read_run

    if out is None:
        if len(run_dirs) > 1:
            raise click.UsageError("several run folders: say where the report goes with --out")
        out = run_dirs[0]
    check_output_dir(out, stage="report")
    # a run folder's own report, or one written before, is replaced; nothing else is
    prior_folder(out, names=RUN_FOLDER_FILES, what="a run or its report", stage="report")
    runs = [read_run(d) for d in run_dirs]
    summaries = summaries_with_priors(runs)
    meta = meta_for(runs, [str(d) for d in run_dirs])
    write_atomic(out / "report.md", render_report(summaries, meta=meta))
    write_atomic(out / "chart.svg", render_chart(summaries))
    if len(runs) == 1:
        write_atomic(out / "report.html", scoring_page(runs[0], tasks_of(runs[0]["meta"])))
    for run in runs:
        _echo_peer_scores(run["summary"])
    click.echo(f"written      {out / 'report.md'}")
    click.echo(f"written      {out / 'chart.svg'}")
    if len(runs) == 1:
        click.echo(f"written      {out / 'report.html'}")


#: What a comparison's folder holds (score compare replaces them together).
COMPARISON_FILES = frozenset({"comparison.json", "report.md", "chart.svg", "report.html"})


@score_group.command("compare")
@click.argument("run_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Where comparison.json, report.md, chart.svg and report.html go "
    "(default: RUN_A_vs_RUN_B beside RUN_A).",
)
@bootstrap_options
@click.option(
    "--brittleness",
    is_flag=True,
    help="B is A with its retrieved cases dropped: also report brittleness (seed 003).",
)
@handle_errors
def score_compare(
    run_a: Path, run_b: Path, out: Path | None, seed: int, resamples: int, brittleness: bool
) -> None:
    """Compare two runs on the same tasks: discordant counts, exact McNemar test and paired
    bootstrap intervals of every score's difference (report.html lists the discordant
    instances, each openable)."""
    from score.cli.run_reports import meta_for, summaries_with_priors, tasks_of
    from score.files import write_all_atomic
    from score.out_paths import check_output_dir, prior_folder
    from score.pages.compare_page import compare_page
    from score.report.chart import render_chart
    from score.report.markdown import render_report
    from score.scoring.run_folder import dumps, read_run
    from score.statistics.stats import compare_runs

    out = out or run_a.parent / f"{run_a.name}_vs_{run_b.name}"
    check_output_dir(out, stage="compare")
    replaced = prior_folder(
        out,
        names=COMPARISON_FILES,
        marker=("comparison.json", ("sqlgold.comparison/",)),
        what="a comparison",
        stage="compare",
    )
    a, b = read_run(run_a), read_run(run_b)
    meta = meta_for([a, b], [f"A {run_a}", f"B {run_b}"], suites_may_differ=True)
    try:
        comparison = compare_runs(
            a["records"], b["records"], seed=seed, resamples=resamples, brittleness=brittleness
        )
        summaries = summaries_with_priors([a, b], comparison["bootstrap"])
        files = {  # every file made before any is written: all four, or none
            out / "comparison.json": dumps(comparison),
            out / "report.md": render_report(summaries, comparison, meta=meta),
            out / "chart.svg": render_chart(summaries, comparison),
            out / "report.html": compare_page(a, b, comparison, tasks_of(a["meta"])),
        }
    except ValueError as e:
        raise ScoringError(str(e), stage="compare") from None
    write_all_atomic(files)
    click.echo(f"A            {run_a}  (run {a['meta'].get('run')})")
    click.echo(f"B            {run_b}  (run {b['meta'].get('run')})")
    click.echo(f"b (A right, B wrong) {comparison['b']}")
    click.echo(f"c (A wrong, B right) {comparison['c']}")
    click.echo(f"McNemar p    {comparison['p_value']:.4g}")
    again = "  (replaced the comparison written there before)" if replaced else ""
    click.echo(f"written      {out}{again}")
