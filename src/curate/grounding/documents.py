"""The grounding documents a retrieval-augmented generator indexes (seed 000's RAG mode).

Three Markdown documents are generated from the database the benchmark runs on and
committed under ``data/grounding/``:

* ``omop_schema.md``: every CDM table and column as it is in this database
  (:mod:`curate.grounding.schema_doc`);
* ``vocabulary.md``: how the vocabulary tables are used, with what this database's
  vocabulary has and lacks (:mod:`curate.grounding.vocabulary_doc`);
* ``duckdb_for_sqlserver_users.md``: DuckDB SQL for SQL Server habits, and the
  transpiler's fix-up rules (``curate.transpile.to_duckdb.RULES``)
  (:mod:`curate.grounding.sql_notes`).

Every example in them is executed while they are generated, with a fixed today, so a
rerun on a database with the same content gives byte-identical files.  The train
split's examples document is written by :mod:`curate.grounding.examples_doc` beside them.

>>> sorted(DOCUMENTS)  # doctest: +NORMALIZE_WHITESPACE
['duckdb_for_sqlserver_users.md', 'omop_schema.md', 'vocabulary.md']
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from curate.grounding.common import GroundingError, atomic_write
from curate.grounding.schema_doc import gather_schema, render_schema
from curate.grounding.sql_notes import render_sql_notes, run_notes
from curate.grounding.vocabulary_doc import gather_vocabulary, render_vocabulary
from curate.transpile.to_duckdb import RULES
from score.defaults import DEFAULT_GROUNDING
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError

DEFAULT_OUT = DEFAULT_GROUNDING
SCHEMA_DOC = "omop_schema.md"
VOCABULARY_DOC = "vocabulary.md"
SQL_NOTES_DOC = "duckdb_for_sqlserver_users.md"
DOCUMENTS = (SCHEMA_DOC, VOCABULARY_DOC, SQL_NOTES_DOC)

#: The today the documents' examples run with (current_date and the like become it).
DOCS_TODAY = dt.date(2019, 12, 31)

#: The transpile fix-up rules the dialect document lists, in the order they apply.
TRANSPILE_RULES: Iterable[Any] = RULES


def build_documents(executor: Executor, *, rules: Iterable[Any] | None = None) -> dict[str, str]:
    """Every grounding document, file name -> text, from an executor with a fixed today.

    ``rules``: the transpile fix-up rules the dialect document lists (for example
    ``curate.transpile.to_duckdb.RULES``); None leaves that section out.
    """
    today = executor.settings.today
    if today is None:
        raise GroundingError("the executor needs a fixed today (ExecutorSettings.today)")
    try:
        schema = gather_schema(executor)
        vocabulary, vocab_runs = gather_vocabulary(executor)
        note_runs = run_notes(executor)
    except QueryError as e:
        raise GroundingError(f"reading the database failed: {e}") from None
    return {
        SCHEMA_DOC: render_schema(schema),
        VOCABULARY_DOC: render_vocabulary(vocabulary, vocab_runs),
        SQL_NOTES_DOC: render_sql_notes(note_runs, today, rules),
    }


def generate_documents(
    db_path: str | Path,
    schema: str | None = None,
    *,
    today: dt.date = DOCS_TODAY,
    rules: Iterable[Any] | None = TRANSPILE_RULES,
) -> dict[str, str]:
    """Open the database read-only and build every grounding document in memory."""
    settings = ExecutorSettings(timeout_seconds=120, today=today)
    # the documents' queries are DuckDB SQL: a server engine runs their translation
    with Executor(db_path, schema, settings, sql_dialect="duckdb") as executor:
        return build_documents(executor, rules=rules)


def write_documents(out_dir: str | Path, documents: dict[str, str]) -> list[str]:
    """Write each document atomically into ``out_dir``; return the names that changed."""
    out = Path(out_dir)
    return [name for name, text in documents.items() if atomic_write(out / name, text)]


def stale_documents(out_dir: str | Path, documents: dict[str, str]) -> list[str]:
    """Names of documents whose file in ``out_dir`` is missing or differs."""
    out = Path(out_dir)
    stale = []
    for name, text in documents.items():
        path = out / name
        if not path.is_file() or path.read_bytes() != text.encode("utf-8"):
            stale.append(name)
    return stale
