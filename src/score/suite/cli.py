"""``sqlgold suite``: build the test suite of a task set."""

from __future__ import annotations

from pathlib import Path

import click

from score.cli.options import (
    ProgressBar,
    duckdb_database_options,
    handle_errors,
    jobs_option,
    profile_option,
    quiet_option,
)


@click.group("suite")
def suite_group() -> None:
    """Test suites: small OMOP databases on which a gold and its near misses differ
    (test-suite accuracy; score with `sqlgold score run ... --suite DIR`)."""


@suite_group.command("build")
@click.argument("tasks", type=click.Path(exists=True, path_type=Path))
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Suite folder to write (replaced whole at the end; a folder that holds "
    "something other than a suite is refused).",
)
@duckdb_database_options(
    "the variants are DuckDB databases made with its schema, types and vocabulary"
)
@click.option(
    "--seed", type=click.IntRange(0), default=0, show_default=True, help="Seed of the variants."
)
@click.option(
    "--max-databases",
    type=click.IntRange(1),
    default=50,
    show_default=True,
    help="Most variants the suite keeps.",
)
@click.option(
    "--max-candidates",
    type=click.IntRange(1),
    default=3000,
    show_default=True,
    help="Most candidate variants made and tried.",
)
@jobs_option("Queries run in parallel.")
@profile_option("Comparator profile that decides whether a neighbour returns its gold's result.")
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds each query may run.",
)
@quiet_option
@handle_errors
def suite_build(
    tasks: Path,
    out: Path,
    db_path: Path,
    schema: str | None,
    seed: int,
    max_databases: int,
    max_candidates: int,
    jobs: int,
    profile: str,
    timeout: float,
    quiet: bool,
) -> None:
    """Build the test suite of TASKS (a task file or a release folder) on the base
    database --db: near misses of every gold, small database variants made from the
    base database's values and the golds' constants, and the variants that tell them
    apart.  Prints where near misses stand with and without the suite."""
    from score.execution.settings import ExecutorSettings
    from score.inputs.task_set import open_task_set
    from score.out_paths import check_output_dir, prior_folder
    from score.suite.build import BuildSettings, build_suite
    from score.suite.suite_file import MANIFEST, SUITE_FORMAT

    check_output_dir(out, stage="suite")  # before any work: a folder we can write
    replaced = prior_folder(  # and one that holds nothing but a suite sqlgold built
        out,
        names=None,
        marker=(MANIFEST, (SUITE_FORMAT.split("/")[0] + "/",)),
        what="a test suite",
        stage="suite",
    )
    task_set = open_task_set(tasks)
    bar = ProgressBar("suite", quiet)
    try:
        report = build_suite(
            task_set.tasks,
            db_path,
            out,
            BuildSettings(seed, max_databases, max_candidates, jobs, profile),
            progress=bar,
            executor_settings=ExecutorSettings(timeout_seconds=timeout),
            schema=schema,
        )
    finally:
        bar.close()
    s = report["near_miss_survival"]
    again = "  (replaced the suite built there before)" if replaced else ""
    click.echo(f"suite        {out}{again}")
    click.echo(f"variants     {len(report['variants'])} (of {report['candidates_tried']} tried)")
    click.echo(f"neighbours   {s['executed']} ran on the base database")
    click.echo(
        f"correct      {s['correct_on_base']} on the base alone ({100 * s['base_only']:.1f}%), "
        f"{s['correct_with_suite']} with the suite ({100 * s['with_suite']:.1f}%)"
    )
    ne = s["not_equivalent"]
    click.echo(
        f"near misses  {ne['correct_with_suite']} of {ne['executed']} correct with the suite "
        f"({100 * ne['with_suite']:.1f}%; {s['vocabulary_bound']} of them bound to the "
        f"vocabulary every variant shares); {s['equivalent_under_cdm']} more are "
        "equivalent under the CDM's constraints"
    )
    click.echo(f"drops        {len(report['drops'])} task(s): gold and reference answer differ")
    click.echo(f"report       {out / 'report.md'}")
