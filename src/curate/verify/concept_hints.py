"""Why a gold came back empty: its concept ids that never occur in the data, and what does.

Most empty golds in OMOP benchmarks ask for concepts the database never uses (the
QueryLibrary's examples name concepts absent from Synthea).  :func:`concept_literals`
finds, on the sqlglot AST, every integer compared with a ``*_concept_id`` column (``=``,
``IN``); :func:`concept_hints` then looks each up on the database: its name and domain
in ``cdm.concept``, how often it occurs in the column's clinical table, and, for one
that never occurs, the most frequent concepts of that table.

>>> concept_literals("SELECT * FROM cdm.condition_occurrence co "
...                  "WHERE co.condition_concept_id IN (201826, 4329847) AND x = 3")
[('condition_concept_id', 201826), ('condition_concept_id', 4329847)]
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp

from score.cdm.schema import CDM_TABLES
from score.execution.executor import Executor

#: For a concept column name, the table whose rows say how often the concept occurs.
_PREFERRED_TABLES = (
    "condition_occurrence",
    "drug_exposure",
    "procedure_occurrence",
    "measurement",
    "observation",
    "device_exposure",
    "visit_occurrence",
    "specimen",
    "death",
    "person",
    "condition_era",
    "drug_era",
)


def _int_literal(node: exp.Expression) -> int | None:
    if isinstance(node, exp.Neg):
        inner = _int_literal(node.this)
        return None if inner is None else -inner
    if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
        return int(node.this)
    return None


def _concept_column(node: exp.Expression) -> str | None:
    if isinstance(node, exp.Column) and node.name.lower().endswith("concept_id"):
        return node.name.lower()
    return None


def concept_literals(sql: str, dialect: str = "duckdb") -> list[tuple[str, int]]:
    """(concept column, id) for each integer the query compares with a concept column."""
    tree = sqlglot.parse_one(sql, read=dialect)
    found: list[tuple[str, int]] = []
    for node in tree.walk():
        if isinstance(node, exp.EQ):
            for col, lit in ((node.this, node.expression), (node.expression, node.this)):
                name, value = _concept_column(col), _int_literal(lit)
                if name and value is not None:
                    found.append((name, value))
        elif isinstance(node, exp.In):
            name = _concept_column(node.this)
            if name:
                found += [(name, v) for v in map(_int_literal, node.expressions) if v is not None]
    seen: set[tuple[str, int]] = set()
    return [f for f in found if not (f in seen or seen.add(f))]


def home_table(column: str) -> str | None:
    """The clinical table that holds ``column`` (the first of the preferred ones).

    >>> home_table("drug_concept_id"), home_table("gender_concept_id")
    ('drug_exposure', 'person')
    """
    for table in _PREFERRED_TABLES:
        if any(name == column for name, _, _ in CDM_TABLES[table]):
            return table
    return None


@dataclass(frozen=True)
class ConceptHint:
    concept_id: int
    column: str
    name: str | None  # None: not in cdm.concept
    domain: str | None
    table: str | None
    occurrences: int | None  # rows of `table` with this concept (None: no home table)
    alternatives: tuple[tuple[int, str | None, int], ...] = ()  # (id, name, rows)

    def render(self) -> str:
        who = (
            f"{self.concept_id} {self.name!r}"
            if self.name
            else f"{self.concept_id} (not in cdm.concept)"
        )
        if self.occurrences is None:
            return f"{who}: compared with {self.column}, which no clinical table holds"
        if self.occurrences:
            return f"{who}: {self.occurrences} rows in cdm.{self.table}.{self.column}"
        lines = [f"{who}: never occurs in cdm.{self.table}.{self.column}"]
        if self.alternatives:
            lines.append(
                "    most frequent there: "
                + "; ".join(
                    f"{cid} {name!r} ({rows} rows)" for cid, name, rows in self.alternatives
                )
            )
        return "\n".join(lines)


def concept_hints(sql: str, executor: Executor, *, top: int = 5) -> list[ConceptHint]:
    """Look up every concept id of ``sql`` on the database (see the module doc)."""
    hints = []
    for column, concept_id in concept_literals(sql):
        rows = executor.execute(
            f"SELECT concept_name, domain_id FROM cdm.concept WHERE concept_id = {concept_id}"
        ).rows()
        name, domain = rows[0] if rows else (None, None)
        table = home_table(column)
        if table is None or table not in executor.tables:
            hints.append(ConceptHint(concept_id, column, name, domain, None, None))
            continue
        (count,) = executor.execute(
            f"SELECT count(*) FROM cdm.{table} WHERE {column} = {concept_id}"
        ).rows()[0]
        alternatives: tuple = ()
        if not count:
            alternatives = tuple(
                executor.execute(
                    f"SELECT t.{column}, c.concept_name, count(*) AS n FROM cdm.{table} t "
                    f"LEFT JOIN cdm.concept c ON c.concept_id = t.{column} "
                    f"WHERE t.{column} <> 0 GROUP BY ALL ORDER BY n DESC, t.{column} LIMIT {top}"
                ).rows()
            )
        hints.append(ConceptHint(concept_id, column, name, domain, table, int(count), alternatives))
    return hints
