"""``sqlgold grounding``: generate the grounding documents, or check they are current.

Registered on the main group by ``main.add_command(grounding)`` in :mod:`curate.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from score.cli_options import database_options, handle_errors

from .grounding import DEFAULT_OUT, generate_documents, stale_documents, write_documents


@click.command("grounding")
@database_options
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    default=DEFAULT_OUT,
    show_default=True,
    help="Folder the documents are written to (or checked in).",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 naming the documents in --out that differ from a fresh generation.",
)
@handle_errors
def grounding(db_path: Path, schema: str | None, out: Path, check: bool) -> None:
    """Generate the grounding documents (OMOP schema, vocabulary, DuckDB notes) from
    the database; every example in them is run on it."""
    documents = generate_documents(db_path, schema)
    if check:
        stale = stale_documents(out, documents)
        if stale:
            click.echo(
                f"stale grounding documents in {out}: {', '.join(stale)} "
                "(regenerate them with `sqlgold grounding`)",
                err=True,
            )
            sys.exit(1)
        click.echo(f"grounding documents in {out} are current")
        return
    changed = set(write_documents(out, documents))
    for name in documents:
        click.echo(f"{'wrote    ' if name in changed else 'unchanged'}  {out / name}")
