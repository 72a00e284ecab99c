"""Option bundles shared by every sqlgold command, so flags stay identical everywhere.

Every CLI module imports this one at start-up, so it imports nothing heavy: the
executor's settings class is imported when a command builds its settings, and the
profile names come from a registry that imports no comparator.
"""

from __future__ import annotations

import datetime as dt
import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from score.cli.exit_codes import ERROR
from score.cli.option_table import option
from score.cli.signals import stopped_by
from score.defaults import DEFAULT_DB, SHOWN_EMBEDDED_DB
from score.errors import SqlgoldError, one_line
from score.execution.engines.kinds import EngineKind, engine_kind
from score.execution.settings import ExecutorSettings, parse_size


class DatabaseTarget(click.ParamType):
    """``--db``: a DuckDB file (a Path) or a ``postgresql://`` or ``sc://`` URL (kept as
    text); a URL of another scheme is a usage error naming the forms sqlgold opens, and a
    command that works on a DuckDB file only (``duckdb_only``: why) refuses a URL."""

    name = "PATH|URL"

    def __init__(self, duckdb_only: str | None = None) -> None:
        self.duckdb_only = duckdb_only
        if duckdb_only:
            self.name = "PATH"

    def convert(self, value, param, ctx):
        if isinstance(value, Path):
            return value
        text = str(value)
        try:
            kind = engine_kind(text)
        except SqlgoldError as e:
            self.fail(e.message, param, ctx)
        if kind is not EngineKind.DUCKDB and self.duckdb_only:
            command = ctx.command_path if ctx is not None else "this command"
            self.fail(f"{command} works on a DuckDB file only: {self.duckdb_only}", param, ctx)
        if kind is not EngineKind.DUCKDB:
            return text
        if Path(text).is_dir():
            self.fail(f"{text!r} is a folder, not a database file", param, ctx)
        return Path(text)


def database_options(f: Callable) -> Callable:
    """``--db`` (a DuckDB file, PostgreSQL or Spark Connect) and ``--schema``."""
    return _database_options(f, DatabaseTarget(), _DB_HELP)


_DB_HELP = (
    "OMOP CDM DuckDB file, postgresql://USER:PASSWORD@HOST:PORT/DB, or "
    "sc://HOST:PORT for Spark Connect (the CDM in database cdm)."
)


def duckdb_database_options(why: str) -> Callable[[Callable], Callable]:
    """``--db`` for a command that works on a DuckDB file only (``why`` says why, in
    the refusal of a URL), and ``--schema``."""

    def apply(f: Callable) -> Callable:
        help_text = f"OMOP CDM DuckDB file (not a server: {why})."
        return _database_options(f, DatabaseTarget(duckdb_only=why), help_text)

    return apply


def _database_options(f: Callable, target: DatabaseTarget, help_text: str) -> Callable:
    f = option(
        "--schema",
        "Schema holding the CDM tables (default: the only schema with a person table; "
        "cdm on PostgreSQL).",
    )(f)
    f = click.option(
        "--db",
        "db_path",
        default=DEFAULT_DB,
        show_default=SHOWN_EMBEDDED_DB,
        type=target,
        callback=_embedded_when_default,
        help=help_text,
    )(f)
    return f


def _embedded_when_default(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """The default database is the embedded one, built in the user's cache folder the
    first time a command needs it (:func:`score.cdm.embedded.ensure_embedded`)."""
    if isinstance(value, Path) and value == DEFAULT_DB and not value.exists():
        from score.cdm.embedded import ensure_embedded

        ensure_embedded(value, say=lambda text: click.echo(text, err=True))
    return value


def _parse_today(ctx: click.Context, param: click.Parameter, value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a date like 2025-12-31") from None


def _check_size(ctx: click.Context, param: click.Parameter, value: str) -> str:
    try:
        parse_size(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None
    return value


#: The options of every query's limits: key in the option table, help, click changes.
_LIMITS: tuple[tuple[str, str | None, dict[str, Any]], ...] = (
    ("--timeout", "Wall-clock limit per query, in seconds (parsing and the guard included).", {}),
    ("--max-rows", None, {}),
    (
        "--memory-limit",
        "Memory per query (DuckDB's buffers and its worker process's address space).",
        {"callback": _check_size},
    ),
    ("--threads", None, {}),
    (
        "--today",
        "Fixed current date: CURRENT_DATE, NOW(), GETDATE() ... become this day.",
        {"callback": _parse_today},
    ),
)


def executor_options(f: Callable) -> Callable:
    """``--timeout``, ``--max-rows``, ``--memory-limit``, ``--threads``, ``--today``."""
    for key, help_text, changes in reversed(_LIMITS):
        f = option(key, help_text, **changes)(f)
    return f


def executor_settings(
    timeout: float,
    max_rows: int,
    memory_limit: str,
    threads: int | None,
    today: dt.date | None,
    max_sql_bytes: int = ExecutorSettings.max_sql_bytes,
) -> ExecutorSettings:
    """The settings of the options :func:`executor_options` adds (:func:`score.limits`)."""
    from score.api import limits

    return limits(
        timeout=timeout,
        max_rows=max_rows,
        memory_limit=memory_limit,
        threads=threads,
        today=today,
        max_sql_bytes=max_sql_bytes,
    )


#: The parameters :func:`executor_options` and :func:`sql_size_option` add to a command.
EXECUTOR_PARAMS = ("timeout", "max_rows", "memory_limit", "threads", "today", "max_sql_bytes")


def take_executor_settings(params: dict[str, Any]) -> ExecutorSettings:
    """The executor settings of a command's parameters, taken out of ``params``."""
    given = {k: params.pop(k) for k in EXECUTOR_PARAMS if k in params}
    return executor_settings(**given)


def sql_size_option(f: Callable) -> Callable:
    """``--max-sql-bytes``: longer SQL texts are refused before they are parsed."""
    help_text = "Longest SQL text (UTF-8 bytes) that is parsed; longer ones are build errors."
    return option("--max-sql-bytes", help_text)(f)


def suite_option(help: str, *, dest: str = "suite_dir") -> Callable:
    """``--suite``: a test suite's folder (``sqlgold suite build`` makes one)."""
    return option("--suite", help, dest=dest)


def profile_option(help: str = "Comparator profile deciding 'the same result'.") -> Callable:
    """``--profile``: one of the comparison profiles, ``sqlgold`` by default."""
    return option("--profile", help)


def jobs_option(help: str) -> Callable:
    """``--jobs``: how many items run in parallel."""
    return option("--jobs", help)


def split_options(
    fraction_help: str,
    *,
    seed_flag: str = "--split-seed",
    seed_help: str = "Split seed.",
    fraction_default: float | None = 0.5,
    seed_default: int | None = 0,
) -> Callable:
    """``--test-fraction`` and the seed of the leakage-aware split (:mod:`score.inputs.split`).

    Commands that also take a bootstrap ``--seed`` name the split's seed ``--split-seed``;
    a default of ``None`` means "the release's split, else the documented default"."""

    def apply(f: Callable) -> Callable:
        f = option(seed_flag, seed_help, default=seed_default)(f)
        return option("--test-fraction", fraction_help, default=fraction_default)(f)

    return apply


def bootstrap_options(f: Callable) -> Callable:
    """``--seed`` and ``--resamples`` of the bootstrap intervals."""
    f = option("--resamples")(f)
    return option("--seed", "Bootstrap seed.")(f)


def quiet_option(f: Callable) -> Callable:
    return option("--quiet")(f)


class ProgressBar:
    """Progress on stderr, made when the total is first known; silent when quiet.

    Call it with ``(done, total)``, and optionally the ``stage`` under way (a new stage
    starts a new bar) and a ``note`` on where it stands; :meth:`close` finishes the line.
    In a terminal it is click's bar (with an ETA unless the total is only a bound,
    ``eta=False``); elsewhere (a CI log, a file) one plain line at the start, at most one
    every :data:`PLAIN_EVERY` seconds after, and one at the end, so a log shows the
    command at work without a line per step.
    """

    def __init__(self, label: str, quiet: bool) -> None:
        self.label = label
        self.quiet = quiet
        self._bar = None
        self._done = 0
        self._stage: str | None = None
        self._note = ""
        self._plain: list = []  # outside a terminal: [last printed at, last line, total]

    def __call__(
        self, done: int, total: int, *, stage: str | None = None, note: str = "", eta=True
    ) -> None:
        if self.quiet:
            return
        if stage != self._stage:
            self.close()
            self._stage = stage
        self._note = note
        label = f"{self.label} {stage}" if stage else self.label
        if not _stderr_is_terminal():
            self._plain_line(label, done, total)
            return
        if self._bar is None:
            self._bar = click.progressbar(
                length=total,
                label=label,
                file=sys.stderr,
                show_pos=True,
                show_eta=eta,
                item_show_func=lambda _: self._note or None,
            )
            self._bar.__enter__()
            self._done = 0
        self._bar.update(done - self._done, current_item=self._note)
        self._done = done

    def _plain_line(self, label: str, done: int, total: int) -> None:
        import time

        now = time.monotonic()
        line = f"{label}: {done}/{total}" + (f" ({self._note})" if self._note else "")
        if not self._plain or now - self._plain[0] >= PLAIN_EVERY:
            click.echo(line, err=True)
            self._plain[:] = [now, None]
        else:
            self._plain[1] = line  # printed at the end if nothing later is

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
        if self._plain and self._plain[1]:
            click.echo(self._plain[1], err=True)
        self._plain = []


#: Seconds between two progress lines outside a terminal.
PLAIN_EVERY = 10.0


def _stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def handle_errors(f: Callable) -> Callable:
    """Turn a SqlgoldError into one line on stderr and exit code 1 (no traceback).

    A file-system error no check caught first (a disk that fills up mid-run, a file
    removed under a command) and text that is not UTF-8 get the same treatment, naming
    the file, under the stage ``io``.
    """

    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        try:
            return f(*args, **kwargs)
        except SqlgoldError as e:
            click.echo(f"error: {e}", err=True)
            sys.exit(ERROR)
        except UnicodeDecodeError as e:
            click.echo(f"error: [io] input is not UTF-8 text: {e}", err=True)
            sys.exit(ERROR)
        except OSError as e:
            where = f"{e.filename}: " if getattr(e, "filename", None) else ""
            click.echo(one_line(f"error: [io] {where}{e.strerror or e}"), err=True)
            sys.exit(ERROR)
        except KeyboardInterrupt as e:  # Ctrl-C, or SIGTERM (score.cli.signals)
            stopped = f"stopped by {stopped_by(e)}{_AFTER_CTRL_C}"
            click.echo(f"error: [{_stage(f.__name__)}] {stopped}", err=True)
            sys.exit(ERROR)

    return wrapper


#: What a user may do after stopping a command that keeps what it finished.
_AFTER_CTRL_C = "; what was finished is kept (score run and generate continue with --resume)"


def _stage(function_name: str) -> str:
    """The stage an interrupted command names, from its function (``score_run`` is
    ``score``)."""
    return function_name.split("_")[0]
