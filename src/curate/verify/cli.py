"""``sqlgold verify``: check one gold / answer pair (or one source record) while editing."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

from curate.cli_options import source_format_option
from curate.sources import READ_DIALECT
from score.cli_options import (
    database_options,
    executor_options,
    executor_settings,
    handle_errors,
    profile_option,
)
from score.errors import SqlgoldError


@dataclass(frozen=True)
class PairSource:
    """Where the pair comes from: files or SQL text given directly, or a source record."""

    gold: str | None
    answer: str | None
    gold_dialect: str
    answer_dialect: str
    record_id: str | None
    source: Path | None
    fmt: str

    def watched(self) -> list[Path]:
        """The files whose saving re-runs the check."""
        if self.record_id is not None:
            return [self.source] if self.source and self.source.is_file() else _sources_in(self)
        return [Path(v) for v in (self.gold, self.answer) if v is not None and _is_file(v)]

    def load(self) -> tuple[str, str, str, str, bool | None]:
        """(gold, gold dialect, answer, answer dialect, order flag), read now."""
        if self.record_id is None:
            assert self.gold is not None and self.answer is not None
            return (
                _sql_argument(self.gold),
                self.gold_dialect,
                _sql_argument(self.answer),
                self.answer_dialect,
                None,
            )
        from curate.ohdsi.render import render_record
        from curate.sources.load import find_source

        assert self.source is not None
        record = find_source(self.source, self.fmt, self.record_id)
        rendered, _ = render_record(record)
        if rendered.gold_sql is None or rendered.answer_sql is None:
            raise SqlgoldError(
                "has no gold and answer to compare", stage="verify", task_id=self.record_id
            )
        return (
            rendered.gold_sql,
            rendered.gold_dialect,
            rendered.answer_sql,
            rendered.answer_dialect,
            record.order_matters,
        )


def _is_file(value: str) -> bool:
    try:
        return Path(value).is_file()
    except (OSError, ValueError):
        return False


def _sources_in(pair: PairSource) -> list[Path]:
    from curate.sources.load import source_files

    assert pair.source is not None
    return [path for path, _ in source_files(pair.source, pair.fmt)]


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
@click.option(
    "--watch",
    is_flag=True,
    help="Keep the database open and check again whenever the gold or answer file "
    "(or the --source file) is saved; Ctrl-C ends it.",
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
    watch,
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
    run; 1 error.  With --watch the check runs again whenever a file it reads is saved,
    on the same open database, until Ctrl-C (exit code 0).
    """
    if record_id is not None and source is None:
        raise click.UsageError("--id needs --source")
    if record_id is None and (gold is None or answer is None):
        raise click.UsageError("give --gold and --answer, or --id and --source")
    pair = PairSource(gold, answer, gold_dialect, answer_dialect, record_id, source, fmt)
    from score.executor import Executor

    settings = executor_settings(timeout, max_rows, memory_limit, threads, today)
    with Executor(db_path, schema, settings) as executor:
        if not watch:
            if not _check(pair, executor, profile, rows):
                sys.exit(2)
            return
        paths = pair.watched()
        if not paths:
            raise click.UsageError("--watch needs --gold/--answer files or --id with --source")
        _watch(pair, paths, executor, profile, rows)


def _check(pair: PairSource, executor, profile: str, rows: int) -> bool:
    """Run the check once and print it; True when the pair gives the same, non-empty result."""
    from curate.verify.pair import render_pair, verify_pair

    gold, gold_dialect, answer, answer_dialect, order = pair.load()
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
    return check.ok


def _watch(pair: PairSource, paths: list[Path], executor, profile: str, rows: int) -> None:
    from curate.verify.watch import watch

    count = {"n": 0}

    def again(changed: list[Path]) -> None:
        count["n"] += 1
        what = ", ".join(str(p) for p in changed) if changed else "start"
        click.echo(f"=== check {count['n']} ({what}) ===")
        try:
            _check(pair, executor, profile, rows)
        except SqlgoldError as e:  # a half-edited file: say so and keep watching
            click.echo(f"error: {e}")
        click.echo(f"=== watching {', '.join(str(p) for p in paths)} (Ctrl-C ends) ===")

    try:
        watch(paths, again)
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
