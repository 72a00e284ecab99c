"""``sqlgold verify``: check one gold / answer pair (or one source record) while editing."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from curate.cli import quick_exit
from curate.cli.options import source_format_option
from curate.sources import READ_DIALECT
from score.cli.exit_codes import FOUND_DIFFERENT
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import (
    database_options,
    executor_options,
    executor_settings,
    handle_errors,
    profile_option,
    suite_option,
)
from score.defaults import DEFAULT_SOURCE
from score.errors import SqlgoldError

if TYPE_CHECKING:
    from sqlglot import exp


@dataclass(frozen=True)
class Loaded:
    """What one check runs: a gold (with or without an answer), or unanswerable claims."""

    gold: str | None = None
    gold_dialect: str = "tsql"
    answer: str | None = None
    answer_dialect: str = "duckdb"
    order: bool | None = None
    empty_tables: tuple[str, ...] | None = None  # set for an unanswerable record
    null_columns: tuple[str, ...] = ()
    declared: str | None = None  # an unanswerable record's source declaration
    gold_tree: exp.Expr | None = None  # a record's gold made one query, read as curation reads it


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
        """The files whose saving re-runs the check; a --gold or --answer that names
        something other than a regular file (a FIFO, a device, a folder) is an error."""
        if self.record_id is not None:
            return [self.source] if self.source and self.source.is_file() else _sources_in(self)
        found = []
        for value, flag in ((self.gold, "--gold"), (self.answer, "--answer")):
            kind = None if value is None else file_kind(value)
            if kind == "file":
                found.append(Path(value))  # type: ignore[arg-type]
            elif kind is not None:
                raise SqlgoldError(
                    f"{flag}: a {kind}, not a regular file (--watch reads files)",
                    stage="verify",
                    path=value,
                )
        return found

    def load(self) -> Loaded:
        """What to check, read now."""
        if self.record_id is None:
            assert self.gold is not None
            return Loaded(
                _sql_argument(self.gold, "--gold"),
                self.gold_dialect,
                None if self.answer is None else _sql_argument(self.answer, "--answer"),
                self.answer_dialect,
            )
        from curate.ohdsi.render import render_record_gold_tree
        from curate.sources.load import find_source
        from curate.transpile.to_duckdb import READS

        assert self.source is not None
        record = find_source(self.source, self.fmt, self.record_id)
        if not record.answerable:
            because = record.unanswerable_because
            return Loaded(
                empty_tables=tuple(because.empty_tables) if because else (),
                null_columns=tuple(because.null_columns) if because else (),
                declared=because.declared if because else None,
            )
        # the gold read as curation reads it: a script made one query comes as its tree
        rendered, _, tree = render_record_gold_tree(record, READS["tsql"])
        if rendered.gold_sql is None:
            raise SqlgoldError("has no gold_sql to check", stage="verify", task_id=self.record_id)
        return Loaded(
            rendered.gold_sql,
            rendered.gold_dialect,
            rendered.answer_sql,
            rendered.answer_dialect,
            record.order_matters,
            gold_tree=tree,
        )


#: The largest SQL file ``verify`` reads (a gold is a few kilobytes; a device or a file
#: that never ends must not fill the memory).
MAX_SQL_FILE_BYTES = 16 * 2**20

_KINDS = (
    (stat.S_ISREG, "file"),
    (stat.S_ISDIR, "folder"),
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def file_kind(value: str) -> str | None:
    """What ``value`` names, a symlink followed: ``file`` (a regular one), ``folder``,
    ``FIFO``, ``character device``, ...; None when nothing is there (or it cannot be
    looked at).

    >>> file_kind("/dev/null"), file_kind("/"), file_kind("SELECT 1")
    ('character device', 'folder', None)
    """
    try:
        mode = os.stat(value).st_mode
    except (OSError, ValueError):
        return None
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _sources_in(pair: PairSource) -> list[Path]:
    from curate.sources.load import source_files

    assert pair.source is not None
    return [path for path, _ in source_files(pair.source, pair.fmt)]


def _looks_like_a_path(value: str) -> bool:
    """A value meant as a file name rather than SQL: one word (a query has at least two:
    ``missing.sql``, ``q/gold.sql`` and ``gold_query`` are file names)."""
    text = value.strip()
    return bool(text) and not any(c.isspace() for c in text)


def _sql_argument(value: str, option: str) -> str:
    """A file's text when ``value`` names a file, else ``value`` itself as SQL; a value
    that names a folder, or looks like a path that does not exist, is an error, and so is
    an empty one."""
    if not value.strip():
        raise SqlgoldError(f"{option}: empty (give a SQL file or SQL text)", stage="verify")
    kind = file_kind(value)
    if kind is not None and kind != "file":  # a FIFO is never read: it may never end
        raise SqlgoldError(f"{option}: a {kind}, not a SQL file", stage="verify", path=value)
    if kind == "file":
        try:
            with open(value, "rb") as f:  # a file replaced meanwhile is read as it is now
                data = f.read(MAX_SQL_FILE_BYTES + 1)
        except OSError as e:
            raise SqlgoldError(
                f"{option}: cannot read: {e.strerror or e}", stage="verify", path=value
            ) from None
        if len(data) > MAX_SQL_FILE_BYTES:
            raise SqlgoldError(
                f"{option}: over {MAX_SQL_FILE_BYTES:,} bytes, not a SQL file to check",
                stage="verify",
                path=value,
            )
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[: e.start].count(b"\n") + 1
            raise SqlgoldError(
                f"{option}: not UTF-8 text (byte 0x{data[e.start]:02x})",
                stage="verify",
                path=value,
                line=line,
            ) from None
    if _looks_like_a_path(value):
        raise SqlgoldError(
            f"{option}: no such file (and one word is not a query)", stage="verify", path=value
        )
    return value


@click.command("verify", context_settings=HELP)
@option("--gold")
@option("--answer", "Reference answer (a file or SQL text); without it the gold is checked alone.")
@option("--gold-dialect", type=click.Choice(sorted(READ_DIALECT)))
@option("--answer-dialect", type=click.Choice(sorted(READ_DIALECT)))
@option("--id", "Check this record of --source instead.")
@option(
    "--source",
    f"Source file or folder holding --id  [default: {DEFAULT_SOURCE}, the project's own "
    "source records, when the current folder is its checkout].",
)
@source_format_option("Format of --source.")
@profile_option()
@option("--rows")
@option(
    "--watch",
    "Keep the database open and check again whenever the gold or answer file (or the "
    "--source file) is saved; Ctrl-C ends it.",
)
@suite_option(
    "A test suite's folder (built on this database): after the base database, run "
    "both queries on its variants and show the first one on which they differ."
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
    suite_dir,
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
    never occur in the data and the most frequent concepts that do.  A gold with no
    answer (--gold alone, or a record without answer_sql) is checked alone; an
    unanswerable record's claims (empty tables, all-NULL columns) are checked on the
    database.

    The gold meets the checks curation applies (the reference rules: one of them failed
    is named), also when it is checked alone.  On PostgreSQL or Spark (--db URL) both are
    checked as DuckDB SQL, as curation checks them, and run translated; an answer
    written in that engine's dialect (--answer-dialect postgres) runs as written.

    Exit codes: 0 same, non-empty result and a gold that meets every reference rule (or
    the gold alone runs, is not empty and meets them, or the claims hold); 3 different,
    an empty gold, a gold that fails a reference rule, a side that did not run, or a
    claim that does not hold, or (--suite) a variant on which the two differ; 1 error;
    2 usage.  With --watch the check runs again whenever a file
    it reads is saved, on the same open database, until Ctrl-C (exit code 0).
    """
    if record_id is not None and source is None:
        if not DEFAULT_SOURCE.is_file():
            raise click.UsageError(f"--id needs --source ({DEFAULT_SOURCE} is not here)")
        source = DEFAULT_SOURCE
    if record_id is None and gold is None:
        raise click.UsageError("give --gold (and --answer), or --id and --source")
    pair = PairSource(gold, answer, gold_dialect, answer_dialect, record_id, source, fmt)
    from score.execution.arrow_pandas import answer_without_pandas
    from score.execution.processes import fork_server

    fork_server.start(db_path)  # the query process's imports overlap with this process's
    answer_without_pandas()  # no pandas object is ever made here: spare its import
    from score.execution.executor import OpeningExecutor

    settings = executor_settings(timeout, max_rows, memory_limit, threads, today)
    suite = None
    if suite_dir is not None:
        from score.suite.suite_file import read_suite

        suite = read_suite(suite_dir)
    # the query process opens the database while this one imports the checking machinery
    # gold and answer are checked as DuckDB SQL, as curation checks them; a server engine
    # runs its translation
    with OpeningExecutor(db_path, schema, settings, sql_dialect="duckdb") as opening:
        import curate.verify.pair  # noqa: F401

        if watch:
            paths = pair.watched()
            if not paths:
                raise click.UsageError("--watch needs --gold/--answer files or --id with --source")
            _watch(pair, paths, opening.result(), profile, rows, suite)
            return
        loaded = pair.load()  # the files (or the source record) are read meanwhile too
        same = _check(loaded, opening.result(), profile, rows, suite)
    quick_exit.allow()  # the report is printed and the executor closed: nothing to tear down
    if not same:
        sys.exit(FOUND_DIFFERENT)


def _check(loaded: Loaded, executor, profile: str, rows: int, suite=None) -> bool:
    """Run the check once and print it; True when the pair gives the same, non-empty result
    (a gold alone: runs and is not empty; an unanswerable record: its claims hold), and
    with a test suite the same result on every variant too."""
    if suite is not None:  # a suite built on another database: refused before any check
        from score.suite.suite_file import check_suite_for

        check_suite_for(
            suite, task_set_sha256=suite.task_set_sha256, base_fingerprint=executor.fingerprint
        )
    if loaded.empty_tables is not None:
        from curate.verify.alone import check_claims, render_claims

        claims = check_claims(loaded.empty_tables, loaded.null_columns, executor, loaded.declared)
        click.echo(render_claims(claims))
        if suite is not None:
            click.echo("\ntest suite: not checked (an unanswerable record has no query to run)")
        return claims.ok
    assert loaded.gold is not None
    if loaded.answer is None:
        from curate.verify.alone import check_gold_alone, render_gold_alone

        alone = check_gold_alone(
            loaded.gold, loaded.gold_dialect, executor, profile=profile, tree=loaded.gold_tree
        )
        click.echo(render_gold_alone(alone, rows=rows))
        if suite is not None:
            click.echo("\ntest suite: not checked (no answer to compare the gold with)")
        return alone.ok
    from curate.verify.pair import render_pair, verify_pair

    check = verify_pair(
        loaded.gold,
        loaded.answer,
        executor,
        gold_dialect=loaded.gold_dialect,
        answer_dialect=loaded.answer_dialect,
        profile=profile,
        order_matters=loaded.order,
        gold_tree=loaded.gold_tree,
    )
    click.echo(render_pair(check, rows=rows))
    if suite is None:
        return check.ok
    from curate.verify.suite_pair import check_on_suite, render_suite

    finding = check_on_suite(check, suite, executor.settings, executor.fingerprint)
    click.echo("")
    click.echo(render_suite(finding, suite, rows=rows))
    return check.ok and finding.ok


def _watch(
    pair: PairSource, paths: list[Path], executor, profile: str, rows: int, suite=None
) -> None:
    from curate.verify.watch import watch

    count = {"n": 0}

    def again(changed: list[Path]) -> None:
        count["n"] += 1
        what = ", ".join(str(p) for p in changed) if changed else "start"
        click.echo(f"=== check {count['n']} ({what}) ===")
        try:
            _check(pair.load(), executor, profile, rows, suite)
        except SqlgoldError as e:  # a half-edited file: say so and keep watching
            click.echo(f"error: {e}")
        click.echo(f"=== watching {', '.join(str(p) for p in paths)} (Ctrl-C ends) ===")

    try:
        watch(paths, again)
    except KeyboardInterrupt:
        click.echo("stopped watching", err=True)
