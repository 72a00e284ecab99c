"""``sqlgold grounding``: generate the grounding documents, or check they are current.

Registered on the main group by ``main.add_command(grounding)`` in :mod:`curate.cli`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from curate.cli.options import split_options
from score.cli.exit_codes import FOUND_DIFFERENT
from score.cli.help_options import HELP
from score.cli.option_table import option
from score.cli.options import duckdb_database_options, handle_errors
from score.defaults import DEFAULT_GROUNDING


@click.command("grounding", context_settings=HELP)
@duckdb_database_options(
    "its SQL notes run DuckDB examples; build the documents from the DuckDB file of the "
    "same CDM (sqlgold db build, or the file sqlgold db load copied)"
)
@option("--out", "Folder the documents are written to (or checked in).", default=DEFAULT_GROUNDING)
@option(
    "--tasks",
    "A curated task file: also write examples.md from the train side of its split.",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@split_options("Share of each tier held out for evaluation; 1.0 writes no examples document.")
@option(
    "--check", "Write nothing; exit 3 naming the documents in --out that differ from a fresh one."
)
@handle_errors
def grounding(
    db_path: Path,
    schema: str | None,
    out: Path,
    tasks_path: Path | None,
    test_fraction: float,
    seed: int,
    check: bool,
) -> None:
    """Generate the grounding documents (OMOP schema, vocabulary, DuckDB notes) from
    the database; every example in them is run on it.  With --tasks, also the examples
    document, built only from the train side's verified gold SQL so that no held-out
    task can retrieve its own answer."""
    from curate.grounding.common import GroundingError
    from curate.grounding.documents import (
        SCHEMA_DOC,
        SQL_NOTES_DOC,
        VOCABULARY_DOC,
        generate_documents,
        stale_documents,
        write_documents,
    )
    from curate.grounding.examples_doc import EXAMPLES_DOC, examples_document, leaked_tasks
    from score.inputs.split import split_tasks
    from score.inputs.task_set import load_tasks
    from score.out_paths import check_output_dir, prior_folder

    if not check:
        check_output_dir(out, stage="grounding")
        names = frozenset({SCHEMA_DOC, VOCABULARY_DOC, SQL_NOTES_DOC, EXAMPLES_DOC})
        prior_folder(out, names=names, what="grounding documents", stage="grounding")
    documents = generate_documents(db_path, schema)
    stale_examples = False
    if tasks_path is not None:
        split = split_tasks(load_tasks(tasks_path), test_fraction=test_fraction, seed=seed)
        examples = examples_document(split["train"])
        if examples is None:
            stale_examples = (out / EXAMPLES_DOC).exists()
        else:
            leaked = leaked_tasks(examples, split["test"])
            if leaked:
                raise GroundingError(f"examples would hold test answers: {', '.join(leaked)}")
            documents[EXAMPLES_DOC] = examples
    if check:
        stale = stale_documents(out, documents) + ([EXAMPLES_DOC] if stale_examples else [])
        if stale:
            click.echo(
                f"stale grounding documents in {out}: {', '.join(stale)} "
                "(regenerate them with `sqlgold grounding`)",
                err=True,
            )
            sys.exit(FOUND_DIFFERENT)
        click.echo(f"grounding documents in {out} are current")
        return
    changed = set(write_documents(out, documents))
    if stale_examples:
        (out / EXAMPLES_DOC).unlink()
        click.echo(f"removed    {out / EXAMPLES_DOC} (no train side at --test-fraction 1.0)")
    for name in documents:
        click.echo(f"{'wrote    ' if name in changed else 'unchanged'}  {out / name}")
