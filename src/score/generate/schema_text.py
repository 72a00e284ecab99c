"""The database part of a prompt: the facts of :mod:`.database_facts` as text.

Seed 004's layout (Rajkumar et al. 2022, "Create Table + Select 3"): a ``CREATE TABLE``
statement for every table that has rows, the columns NULL in every row marked where they
are declared, three example rows under each statement, the empty tables named, the
concepts counted by domain and vocabulary, and a database note stating the vocabulary
quirks the questions already state.  The text is a pure function of the facts, so the
same database always gives byte-identical text; its sha256 pins it
(:func:`schema_sha256`).

>>> from score.generate.database_facts import TableFacts
>>> t = TableFacts("death", (("person_id", "INTEGER"), ("cause_source_value", "VARCHAR")),
...                2, ("cause_source_value",), ((1, None), (2, None)))
>>> print(create_table(t).replace("\\t", " | "))
CREATE TABLE cdm.death (
    person_id INTEGER,
    cause_source_value VARCHAR -- NULL in every row
);
/*
3 example rows:
SELECT * FROM cdm.death LIMIT 3;
person_id | cause_source_value
1 | NULL
2 | NULL
*/
"""

from __future__ import annotations

import hashlib
from typing import Any

from score.comparison.cell_text import typed_text
from score.generate.database_facts import EXAMPLE_ROWS, DatabaseFacts, TableFacts, VocabularyFacts

#: Longest text value shown in an example row before it is cut.
MAX_VALUE_CHARS = 60


def format_value(value: Any) -> str:
    """One example value on one line: NULL, ISO dates, long text cut, no tabs or newlines.

    >>> import datetime as dt
    >>> format_value(None), format_value(dt.date(2020, 1, 2)), format_value(2.5)
    ('NULL', '2020-01-02', '2.5')
    >>> format_value("a\\tb" + "x" * 70)[-5:]
    'xx...'
    """
    typed = typed_text(value)
    if typed is not None:
        return typed
    text = " ".join(str(value).split())
    if len(text) > MAX_VALUE_CHARS:
        text = text[: MAX_VALUE_CHARS - 3] + "..."
    return text


def create_table(table: TableFacts) -> str:
    """A table's ``CREATE TABLE`` statement and its example rows in a comment."""
    nulls = set(table.null_columns)
    lines = [f"CREATE TABLE cdm.{table.name} ("]
    for i, (name, dtype) in enumerate(table.columns):
        comma = "," if i < len(table.columns) - 1 else ""
        note = " -- NULL in every row" if name in nulls else ""
        lines.append(f"    {name} {dtype}{comma}{note}")
    lines.append(");")
    if table.examples:
        lines += [
            "/*",
            f"{EXAMPLE_ROWS} example rows:",
            f"SELECT * FROM cdm.{table.name} LIMIT {EXAMPLE_ROWS};",
            "\t".join(name for name, _ in table.columns),
            *("\t".join(format_value(v) for v in row) for row in table.examples),
            "*/",
        ]
    return "\n".join(lines)


def concept_table(facts: DatabaseFacts) -> str:
    lines = [
        "/*",
        "Concepts in cdm.concept by domain and vocabulary:",
        "domain_id\tvocabulary_id\tconcepts\tstandard",
        *(
            f"{format_value(c.domain_id)}\t{format_value(c.vocabulary_id)}\t"
            f"{c.concepts}\t{c.standard}"
            for c in facts.concept_counts
        ),
        "*/",
    ]
    return "\n".join(lines)


def database_note(vocab: VocabularyFacts) -> str:
    """The database note: what this database's vocabulary tables do and do not hold."""
    lines = [
        "Database note:",
        f"- cdm.concept holds {vocab.concepts:,} concepts, {vocab.standard:,} of them standard: "
        "only the concepts the data use, not a full vocabulary release.",
    ]
    if vocab.no_matching_concept is not None:
        lines.append(
            f"- Concept id 0 ('{vocab.no_matching_concept}') marks a source value that could "
            "not be coded."
        )
    if vocab.ancestor_only_self:
        lines.append(
            f"- cdm.concept_ancestor holds only each standard concept as its own ancestor "
            f"({vocab.ancestor_rows:,} rows, min_levels_of_separation 0): there is no "
            "hierarchy above or below a concept."
        )
    if vocab.relationships:
        kinds = ", ".join(
            f"'{r}' ({n:,} rows, {s:,} from a concept to itself)" for r, n, s in vocab.relationships
        )
        lines.append(f"- cdm.concept_relationship holds only {kinds}.")
    if vocab.names_repeat_ids:
        named = ", ".join(f"cdm.{t}" for t in vocab.names_repeat_ids)
        lines.append(f"- In {named} the name columns repeat the ids.")
    return "\n".join(lines)


def schema_text(facts: DatabaseFacts) -> str:
    """The whole database part of the prompt (ends without a newline)."""
    present = [t for t in facts.tables if t.rows]
    empty = [t.name for t in facts.tables if not t.rows]
    parts = [create_table(t) for t in present]
    if empty:
        parts.append(
            "-- Empty tables (they exist but hold no rows): "
            + ", ".join(f"cdm.{name}" for name in empty)
        )
    if facts.concept_counts:
        parts.append(concept_table(facts))
    if facts.vocabulary is not None:
        parts.append(database_note(facts.vocabulary))
    return "\n\n".join(parts)


def schema_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
