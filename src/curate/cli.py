"""The ``sqlgold`` command line: a thin layer that parses options and calls the library.

Library errors (:class:`score.errors.SqlgoldError`) become one line on stderr and exit
code 1; ``--help`` works on every command; progress goes to stderr, data to stdout.

Start-up stays fast: the command modules and option bundles import only click, and each
command imports its machinery (DuckDB, sqlglot, pyarrow, scipy, datasets) when it runs.
"""

from __future__ import annotations

import sys
from contextlib import closing
from pathlib import Path

import click

from curate.cli_options import source_format_option
from curate.database.cli import db
from curate.grounding.cli import grounding
from curate.publish.cli import diff_command, publish_command
from curate.verify.cli import verify
from score.cli import score_group
from score.cli_options import (
    ProgressBar,
    database_options,
    executor_options,
    executor_settings,
    handle_errors,
    jobs_option,
    profile_option,
    quiet_option,
)
from score.generate.cli import generate_command, prompt_command


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="sqlgold", prog_name="sqlgold")
def main() -> None:
    """sqlgold: curate and score execution-graded text-to-SQL benchmarks over OMOP CDM."""


@main.command("curate")
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@source_format_option(
    "Source format: the project's JSONL, OHDSI QueryLibrary pages, or FunSQL train.jsonl."
)
@database_options
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Task file to write (default: data/benchmark/<name>_tasks.jsonl).",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="JSON report to write; the Markdown report goes beside it "
    "(default: <name>_report.json next to the task file).",
)
@profile_option(
    "Comparator profile that decides whether a reference answer returns the gold's result."
)
@jobs_option("Records verified in parallel.")
@click.option(
    "--min-rows",
    type=click.IntRange(0),
    default=1,
    show_default=True,
    help="Fewest rows a gold may return.",
)
@click.option(
    "--max-gold-rows",
    type=click.IntRange(1),
    default=1000,
    show_default=True,
    help="Most rows a gold may return.",
)
@click.option(
    "--allow-all-zero", is_flag=True, help="Keep golds whose every value is zero or NULL."
)
@click.option("--allow-current-date", is_flag=True, help="Keep golds that read the current date.")
@click.option("--no-determinism-check", is_flag=True, help="Do not run each gold twice.")
@click.option(
    "--allow-ties", is_flag=True, help="Keep golds whose ORDER BY ... LIMIT cuts through ties."
)
@click.option(
    "--allow-unordered-limit", is_flag=True, help="Keep golds with LIMIT/TOP but no ORDER BY."
)
@click.option("--strict", is_flag=True, help="Exit with code 2 if any record is dropped.")
@executor_options
@quiet_option
@handle_errors
def curate(
    source,
    fmt,
    db_path,
    schema,
    out,
    report,
    profile,
    jobs,
    min_rows,
    max_gold_rows,
    allow_all_zero,
    allow_current_date,
    no_determinism_check,
    allow_ties,
    allow_unordered_limit,
    strict,
    timeout,
    max_rows,
    memory_limit,
    threads,
    today,
    quiet,
):
    """Curate SOURCE (a file or folder of source records) into a verified task file.

    Every record is rendered, transpiled to DuckDB, run on the database, checked against
    the reference rules and its reference answer, tiered and validated; the report says
    what was kept and why each drop happened.  Exit codes: 0 done, 1 error, 2 records
    dropped under --strict.
    """
    from curate.curation import curate_to_files
    from curate.pipeline import CurationOptions
    from curate.verify.reference_rules import ReferenceRules
    from score.executor import Executor

    rules = ReferenceRules(
        min_rows=min_rows,
        max_rows=max_gold_rows,
        not_all_zero_or_null=not allow_all_zero,
        allow_current_date=allow_current_date,
        deterministic=not no_determinism_check,
        limit_needs_order=not allow_unordered_limit,
        no_ties_at_limit=not allow_ties,
    )
    settings = executor_settings(timeout, max_rows, memory_limit, threads, today)
    bar = ProgressBar("curating", quiet)
    count = {"total": 0, "done": 0}

    def on_start(total: int) -> None:
        count["total"] = total

    def progress(record) -> None:
        count["done"] += 1
        bar(count["done"], count["total"])

    with Executor(db_path, schema, settings) as executor, closing(bar):
        run = curate_to_files(
            source,
            fmt,
            executor,
            out=out,
            report_path=report,
            options=CurationOptions(rules=rules, profile=profile),
            jobs=jobs,
            on_start=on_start,
            progress=progress,
        )
    c = run.report["counts"]
    click.echo(f"records      {c['records']}")
    click.echo(
        f"kept         {c['kept']}  ({', '.join(f'{t} {n}' for t, n in c['by_tier'].items())})"
    )
    click.echo(f"dropped      {c['dropped']}")
    for key, n in c["dropped_by_rule"].items():
        click.echo(f"  {key:<40}{n:>5}")
    click.echo(f"tasks        {run.tasks_path}")
    click.echo(f"report       {run.report_path} (+ .md)")
    if strict and c["dropped"]:
        sys.exit(2)


def run() -> None:
    """The ``sqlgold`` console script: :func:`main`, started as fast as it can be.

    pyarrow imports pandas (about 0.3 s of CPU, a third of a trivial ``verify``) the
    first time it converts values, only to ask whether they are pandas objects.
    ``verify`` never has any, so in its own process the import is made to fail fast (a
    ``None`` in ``sys.modules``) and pyarrow carries on as without pandas.  Only a
    process started for ``verify`` does this; :func:`main` called in-process does not.
    """
    if sys.argv[1:2] == ["verify"] and "pandas" not in sys.modules:
        sys.modules["pandas"] = None  # type: ignore[assignment]
    main()


main.add_command(db)
main.add_command(score_group)
main.add_command(verify)
main.add_command(grounding)
main.add_command(publish_command)
main.add_command(diff_command)
main.add_command(generate_command)
main.add_command(prompt_command)


if __name__ == "__main__":
    run()
