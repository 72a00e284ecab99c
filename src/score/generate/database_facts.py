"""What a prompt says about the database, asked of the database actually used.

Every fact comes through the read-only :class:`~score.execution.executor.Executor` (the only part
of sqlgold that runs SQL), so a prompt describes the file a prediction is scored on, not
a document written earlier:

* per CDM table present: its columns with their DuckDB types, its row count, the columns
  that are NULL in every row, and three example rows (Rajkumar et al. 2022, "Create
  Table + Select 3") taken in a fixed order (``ORDER BY ALL``) so they are the same on
  every run;
* concepts counted by domain and vocabulary (and how many of them are standard);
* the vocabulary quirks the database note states (:class:`VocabularyFacts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from score.cdm.duckdb_file import quote
from score.execution.executor import Executor
from score.execution.result import QueryError
from score.generate.errors import GenerationError

#: Example rows shown per non-empty table (seed 004: Create Table + Select 3).
EXAMPLE_ROWS = 3


@dataclass(frozen=True)
class TableFacts:
    name: str
    columns: tuple[tuple[str, str], ...]  # (name, DuckDB type), in table order
    rows: int
    null_columns: tuple[str, ...]  # NULL in every row (empty for an empty table)
    examples: tuple[tuple[Any, ...], ...]  # the first EXAMPLE_ROWS rows in ORDER BY ALL order


@dataclass(frozen=True)
class ConceptCount:
    domain_id: str | None
    vocabulary_id: str | None
    concepts: int
    standard: int


@dataclass(frozen=True)
class VocabularyFacts:
    concepts: int
    standard: int
    no_matching_concept: str | None  # concept_name of concept id 0, if the row exists
    ancestor_rows: int
    ancestor_only_self: bool  # every concept_ancestor row relates a concept to itself
    relationships: tuple[tuple[str, int, int], ...]  # (relationship_id, rows, rows to itself)
    names_repeat_ids: tuple[str, ...]  # of vocabulary, domain, concept_class


@dataclass(frozen=True)
class DatabaseFacts:
    tables: tuple[TableFacts, ...]
    concept_counts: tuple[ConceptCount, ...]
    vocabulary: VocabularyFacts | None  # None when the database has no concept rows


def _query(executor: Executor, sql: str) -> list[tuple[Any, ...]]:
    try:
        return executor.execute(sql).rows()
    except QueryError as e:
        raise GenerationError(f"cannot read the database for the prompt ({e}): {sql}") from None


def table_facts(executor: Executor, table: str) -> TableFacts:
    """The facts of one CDM table (``cdm.<table>``)."""
    name = f"cdm.{quote(table)}"
    try:
        shape = executor.execute(f"SELECT * FROM {name} LIMIT 0")
    except QueryError as e:
        raise GenerationError(f"cannot read table {table} for the prompt ({e})") from None
    columns = tuple(zip(shape.columns, shape.types, strict=True))
    counts = ", ".join(f"count({quote(c)})" for c, _ in columns)
    (row,) = _query(executor, f"SELECT count(*), {counts} FROM {name}")
    rows = int(row[0])
    nulls = tuple(c for (c, _), n in zip(columns, row[1:], strict=True) if rows and n == 0)
    examples: tuple[tuple[Any, ...], ...] = ()
    if rows:  # every column, left to right (ORDER BY ALL, said so that every engine reads it)
        order = ", ".join(str(i) for i in range(1, len(columns) + 1))
        examples = tuple(
            tuple(r)
            for r in _query(executor, f"SELECT * FROM {name} ORDER BY {order} LIMIT {EXAMPLE_ROWS}")
        )
    return TableFacts(table, columns, rows, nulls, examples)


def _concept_counts(executor: Executor) -> tuple[ConceptCount, ...]:
    rows = _query(
        executor,
        "SELECT domain_id, vocabulary_id, count(*), count(*) FILTER (WHERE standard_concept = 'S') "
        "FROM cdm.concept GROUP BY ALL ORDER BY ALL",
    )
    return tuple(ConceptCount(d, v, int(n), int(s)) for d, v, n, s in rows)


def _vocabulary_facts(executor: Executor, tables: dict[str, TableFacts]) -> VocabularyFacts:
    concepts = tables["concept"].rows
    (standard,) = _query(executor, "SELECT count(*) FROM cdm.concept WHERE standard_concept = 'S'")[
        0
    ]
    zero = _query(executor, "SELECT concept_name FROM cdm.concept WHERE concept_id = 0")
    ancestor_rows, only_self = 0, False
    if "concept_ancestor" in tables:
        ancestor_rows, others = _query(
            executor,
            "SELECT count(*), count(*) FILTER (WHERE ancestor_concept_id <> descendant_concept_id)"
            " FROM cdm.concept_ancestor",
        )[0]
        only_self = ancestor_rows > 0 and others == 0
    relationships: tuple[tuple[str, int, int], ...] = ()
    if "concept_relationship" in tables:
        relationships = tuple(
            (r, int(n), int(s))
            for r, n, s in _query(
                executor,
                "SELECT relationship_id, count(*), "
                "count(*) FILTER (WHERE concept_id_1 = concept_id_2) "
                "FROM cdm.concept_relationship GROUP BY ALL ORDER BY ALL",
            )
        )
    repeat = []
    for table in ("vocabulary", "domain", "concept_class"):
        if tables.get(table) and tables[table].rows:
            (differ,) = _query(
                executor,
                f"SELECT count(*) FROM cdm.{table} WHERE {table}_name IS DISTINCT FROM {table}_id",
            )[0]
            if differ == 0:
                repeat.append(table)
    return VocabularyFacts(
        concepts=int(concepts),
        standard=int(standard),
        no_matching_concept=zero[0][0] if zero else None,
        ancestor_rows=int(ancestor_rows),
        ancestor_only_self=bool(only_self),
        relationships=relationships,
        names_repeat_ids=tuple(repeat),
    )


def gather_facts(executor: Executor) -> DatabaseFacts:
    """Every fact the prompt states, read from ``executor``'s database (CDM table order)."""
    tables = {name: table_facts(executor, name) for name in executor.tables}
    has_concepts = "concept" in tables and tables["concept"].rows > 0
    return DatabaseFacts(
        tables=tuple(tables.values()),
        concept_counts=_concept_counts(executor) if has_concepts else (),
        vocabulary=_vocabulary_facts(executor, tables) if has_concepts else None,
    )
