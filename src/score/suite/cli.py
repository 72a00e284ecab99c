"""``sqlgold suite``: build the test suite of a task set."""

from __future__ import annotations

from pathlib import Path

import click

from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import (
    ProgressBar,
    duckdb_database_options,
    handle_errors,
    jobs_option,
    profile_option,
    quiet_option,
)


@click.group("suite", context_settings=HELP)
def suite_group() -> None:
    """Test suites: small OMOP databases on which a gold and its near misses differ
    (test-suite accuracy; score with `sqlgold score run ... --suite DIR`)."""


@suite_group.command("build", context_settings=HELP)
@click.argument("tasks", type=click.Path(exists=True, path_type=Path))
@option(
    "--out",
    "Suite folder to write (replaced whole at the end; a folder that holds something other "
    "than a suite is refused).",
    required=True,
)
@duckdb_database_options(
    "the variants are DuckDB databases made with its schema, types and vocabulary"
)
@option("--seed", "Seed of the variants.", type=click.IntRange(0))
@option("--max-databases")
@option("--max-candidates", "Most candidate variants made and tried.")
@jobs_option("Queries run in parallel.")
@profile_option("Comparator profile that decides whether a neighbour returns its gold's result.")
@option("--timeout", "Seconds each query may run.")
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
    apart.  Prints where near misses stand with and without the suite, and its reach:
    the golds that return no row on the base database or any variant, whose near misses
    it cannot judge (a warning on stderr when they are over 10% of them)."""
    from score.api import build_suite
    from score.suite.reach import warning

    bar = ProgressBar("suite", quiet)
    try:
        built = build_suite(
            tasks,
            out,
            db=db_path,
            schema=schema,
            seed=seed,
            max_databases=max_databases,
            max_candidates=max_candidates,
            jobs=jobs,
            profile=profile,
            timeout=timeout,
            progress=bar,
        )
    finally:
        bar.close()
    report, replaced = built.report, built.replaced
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
        f"vocabulary, no variant's told them apart); {s['equivalent_under_cdm']} more are "
        "equivalent under the CDM's constraints"
    )
    r = report["reach"]
    click.echo(
        f"reach        {r['distinct_golds_empty_everywhere']} of {r['distinct_golds']} distinct "
        f"golds return no row anywhere; {r['near_misses_unjudged']} near misses "
        f"({100 * r['unjudged_share']:.1f}%) cannot be judged"
    )
    click.echo(f"drops        {len(report['drops'])} task(s): gold and reference answer differ")
    click.echo(f"report       {out / 'report.md'}")
    said = warning(r)
    if said:
        click.echo(f"warning: [suite] {said}", err=True)
