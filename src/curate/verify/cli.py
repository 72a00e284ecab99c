"""``sqlgold verify``: check one gold / answer pair (or one source record) while editing."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from curate.cli_options import source_format_option
from curate.ohdsi.render import render_record
from curate.pipeline import READ_DIALECT
from curate.sources import load_sources
from curate.verify.pair import render_pair, verify_pair
from score.cli_options import (
    database_options,
    executor_options,
    executor_settings,
    handle_errors,
    profile_option,
)
from score.executor import Executor


def _sql_argument(value: str) -> str:
    """A file's text when ``value`` names a file, else ``value`` itself as SQL."""
    path = Path(value)
    try:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    except OSError:
        pass
    return value


@click.command("verify")
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


