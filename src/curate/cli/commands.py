"""The ``sqlgold`` command group and ``sqlgold curate``: a thin layer that parses options and
calls the library (``curate.cli`` names them).

Library errors (:class:`score.errors.SqlgoldError`) become one line on stderr and exit
code 1; ``--help`` works on every command; progress goes to stderr, data to stdout.

Start-up stays fast: the command modules and option bundles import only click, and each
command imports its machinery (DuckDB, sqlglot, pyarrow, scipy, datasets) when it runs.
"""

from __future__ import annotations

import os
import sys
from contextlib import closing
from pathlib import Path

import click

from curate.cli import quick_exit
from curate.cli.options import source_format_option
from curate.database.cli import db
from curate.grounding.cli import grounding
from curate.publish.cli import diff_command, publish_command
from curate.transpile.sqlglot_log import route_sqlglot_warnings
from curate.verify.cli import verify
from curate.verify.smell_names import SMELLS
from score.cli.commands import score_group
from score.cli.config_command import config_command
from score.cli.exit_codes import FOUND_DIFFERENT
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import (
    ProgressBar,
    database_options,
    executor_options,
    executor_settings,
    handle_errors,
    jobs_option,
    profile_option,
    quiet_option,
    suite_option,
)
from score.generate.cli import generate_command, prompt_command
from score.suite.cli import suite_group


@click.group(context_settings=HELP)
@click.version_option(package_name="sqlgold", prog_name="sqlgold")
@click.pass_context
def main(ctx: click.Context) -> None:
    """sqlgold: curate and score execution-graded text-to-SQL benchmarks over OMOP CDM.

    Every command takes its defaults from the nearest sqlgold.toml (or pyproject.toml's
    [tool.sqlgold]) in the current folder or above; `sqlgold config` shows them."""
    from score.config import default_map, load_config
    from score.errors import SqlgoldError

    try:
        ctx.default_map = default_map(main, load_config())
    except SqlgoldError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)


@main.command("curate", context_settings=HELP)
@click.argument("source", type=click.Path(exists=True, path_type=Path))
@source_format_option(
    "Source format: the project's JSONL, OHDSI QueryLibrary pages, FunSQL train.jsonl, or "
    "TEXT-TO-OMOP's question file (text2omop)."
)
@database_options
@option(
    "--out file",
    "Task file to write (default: <name>_tasks.jsonl in the current folder, the name "
    "from the source's: omop_source.jsonl gives omop).",
)
@option(
    "--report",
    "JSON report to write; the Markdown report and the review page (.html) go beside it "
    "(default: <name>_report.json next to the task file).",
)
@profile_option(
    "Comparator profile that decides whether a reference answer returns the gold's result."
)
@jobs_option("Records verified in parallel.")
@option("--min-rows")
@option("--max-gold-rows")
@option("--allow-all-zero")
@option("--allow-current-date")
@option("--no-determinism-check", "Do not run a second time the golds whose result could vary.")
@option("--allow-ties")
@option(
    "--allow-window-ties",
    "Keep golds whose ROW_NUMBER, LAG, FIRST_VALUE ... result depends on how ties fall in "
    "their ORDER BY.",
)
@option("--allow-unordered-limit", "Keep golds with LIMIT/TOP but no ORDER BY.")
@option(
    "--allow-unresolved-semantics",
    "Keep golds whose transpile warns about what it cannot settle (the report lists the warnings).",
)
@option(
    "--smell",
    "Check this gold smell too (repeatable): float_order and shuffled_copy rerun each "
    "gold on a copy of the database with its rows stored in another order (DuckDB only).",
    type=click.Choice(SMELLS),
)
@option(
    "--no-smell",
    "Do not check this gold smell (repeatable); duplicate_rows, numbers_as_text and "
    "sort_direction are checked unless so named.",
    type=click.Choice(SMELLS),
)
@option(
    "--no-advisories",
    "Do not list the OMOP advisories of kept golds (conventions a gold may break: "
    "advice in the report and page, never a drop).",
)
@option(
    "--max-per-result",
    "Keep at most N tasks whose gold results are identical (the first by id); "
    "default: keep all and list the groups in the report.",
)
@option("--strict", "Exit with code 3 if any record is dropped or any source line is unreadable.")
@option(
    "--against",
    "A task file (or release) verified elsewhere, e.g. on DuckDB: the report states "
    "which tasks give the same gold result on this database.",
)
@suite_option(
    "A test suite's folder (built on this database): drop the tasks it drops (rule "
    "suite_disagreement: gold and reference answer differ, or the gold fails, on a variant)."
)
@option(
    "--no-cache",
    "Do not leave the kept golds' results in the gold cache (the user's cache "
    "folder's gold/, which score run reads): scoring on this database then runs them again.",
)
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
    allow_window_ties,
    allow_unordered_limit,
    allow_unresolved_semantics,
    smells_on,
    smells_off,
    no_advisories,
    max_per_result,
    strict,
    against,
    suite_dir,
    no_cache,
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
    what was kept and why each drop happened.  On a PostgreSQL or Spark --db the golds
    run as DuckDB SQL transpiled to that engine, and --against names a task file verified
    elsewhere to compare gold results with.  Exit codes: 0 done; 1 error (nothing
    written, or only the reports when no task was kept); 2 usage; 3 under --strict,
    records dropped or source lines unreadable (the files are written).
    """
    from score.execution.processes import fork_server

    fork_server.start(db_path)  # the query processes' imports overlap with this process's
    from curate.api import curate_file
    from curate.verify.reference_rules import ReferenceRules
    from score.execution.engines.kinds import engine_kind

    rules = ReferenceRules(
        min_rows=min_rows,
        max_rows=max_gold_rows,
        not_all_zero_or_null=not allow_all_zero,
        allow_current_date=allow_current_date,
        deterministic=not no_determinism_check,
        limit_needs_order=not allow_unordered_limit,
        no_ties_at_limit=not allow_ties,
        window_order_ties=not allow_window_ties,
    )
    from curate.verify.smells import SmellRules

    try:
        smell_rules = SmellRules.switched(on=smells_on, off=smells_off)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="'--smell' / '--no-smell'") from None
    route_sqlglot_warnings(quiet=quiet)
    if engine_kind(db_path) != "duckdb" and not quiet:
        click.echo(
            f"note: on {engine_kind(db_path)} golds run as DuckDB SQL transpiled to it; the "
            "case-insensitive collation check runs on DuckDB only, so golds that compare, "
            "group or sort text are dropped as unresolved_semantics here "
            "(--allow-unresolved-semantics keeps them)",
            err=True,
        )
    bar = ProgressBar("curating", quiet)
    with closing(bar):
        run = curate_file(
            source,
            fmt=fmt,
            db=db_path,
            schema=schema,
            out=out,
            report=report,
            profile=profile,
            rules=rules,
            allow_unresolved_semantics=allow_unresolved_semantics,
            smells=smell_rules,
            advisories=not no_advisories,
            max_per_result=max_per_result,
            against=against,
            suite=suite_dir,
            cache=not no_cache,
            jobs=jobs,
            settings=executor_settings(timeout, max_rows, memory_limit, threads, today),
            progress=bar,
        )
    c = run.report["counts"]
    unreadable = run.report["problems"]
    click.echo(f"records      {c['records']}")
    click.echo(
        f"kept         {c['kept']}  ({', '.join(f'{t} {n}' for t, n in c['by_tier'].items())})"
    )
    if c["kept_with_warnings"]:
        n = c["kept_with_warnings"]
        click.echo(f"  with unsettled transpile warnings {n} (see the report)")
    for key, label in (("smells_by_rule", "gold smells"), ("advisories_by_rule", "advisories")):
        if c[key]:
            found = ", ".join(f"{k} {n}" for k, n in c[key].items())
            click.echo(f"  with {label}: {found} (see the report)")
    if c["identical_result_groups"]:
        click.echo(
            f"  in groups with identical gold results {c['kept_in_identical_result_groups']} "
            f"({c['identical_result_groups']} groups, see the report)"
        )
    click.echo(f"dropped      {c['dropped']}")
    first = {}  # a rule id alone says little: each is shown with its first drop's reason
    for r in run.report["records"]:
        if r["status"] == "dropped":
            first.setdefault(f"{r['stage']}/{r['rule']}", r)
    for key, n in c["dropped_by_rule"].items():
        example = first.get(key)
        why = f"  e.g. {example['id']}: {example['reason']}" if example else ""
        line = f"  {key:<40}{n:>5}{why}"
        click.echo(line if len(line) <= 120 else line[:117] + "...")
    if unreadable:
        click.echo(f"unreadable   {len(unreadable)} source line(s) or file(s): see the report")
    if "engine_agreement" in run.report:
        a = run.report["engine_agreement"]["counts"]
        click.echo(
            f"against      {against}: {a['same']} same gold result, {a['different']} "
            f"different, {a['only_here']} kept here only, {a['only_there']} there only"
        )
    again = "  (replaced the task file an earlier curate wrote)" if run.replaced else ""
    click.echo(f"tasks        {run.tasks_path}{again}")
    click.echo(f"report       {run.report_path} (+ .md, .html)")
    if strict and (c["dropped"] or unreadable):
        click.echo(
            f"strict: {c['dropped']} record(s) dropped, {len(unreadable)} unreadable", err=True
        )
        sys.exit(FOUND_DIFFERENT)


main.add_command(db)
main.add_command(score_group)
main.add_command(verify)
main.add_command(grounding)
main.add_command(publish_command)
main.add_command(diff_command)
main.add_command(generate_command)
main.add_command(prompt_command)
main.add_command(suite_group)
main.add_command(config_command)


def run() -> None:
    """The installed ``sqlgold`` script: :func:`main`, ending without Python's teardown
    when the command allowed it (:mod:`curate.cli.quick_exit`), and SIGTERM handled as
    Ctrl-C is (:mod:`score.cli.signals`).  NumPy's BLAS gets one
    thread unless the caller chose (see :data:`score.execution.processes.fork_server.BLAS_THREADS`):
    no command does linear algebra that a second thread would speed up, and the threads
    OpenBLAS starts at import spin on the cores the query processes need."""
    from score.cli.signals import stop_on_sigterm
    from score.execution.processes.fork_server import BLAS_THREADS

    os.environ.setdefault(BLAS_THREADS, "1")
    stop_on_sigterm()  # SIGTERM ends a command as Ctrl-C does, its temporary folder removed
    try:
        main()
    except SystemExit as e:
        quick_exit.end(e.code)
        raise


if __name__ == "__main__":
    run()
