"""The vocabulary grounding document: how OMOP's concept tables are used, on this database.

:func:`gather_vocabulary` measures what the database's vocabulary actually holds (how
many concepts are standard, whether ``concept_ancestor`` has a hierarchy beyond each
concept's row for itself, which relationships ``concept_relationship`` has, which
concept ids the clinical tables use that ``concept`` lacks) and runs every example in
:data:`EXAMPLES`, failing loudly if one fails or returns no rows.
:func:`render_vocabulary` writes the document from those facts, so what it says the
vocabulary has and lacks is measured, not assumed.
"""

from __future__ import annotations

from dataclasses import dataclass

from curate.grounding.common import ExampleRun, markdown_table, plural, render_run, run_example
from curate.grounding.vocabulary_examples import EXAMPLES
from score.cdm.duckdb_file import quote
from score.cdm.schema import CDM_TABLES, VOCABULARY_TABLES
from score.execution.executor import Executor


@dataclass(frozen=True)
class VocabularyFacts:
    """What the database's vocabulary tables hold, measured."""

    table_rows: tuple[tuple[str, int], ...]  # vocabulary table, rows (tables present)
    concepts_by_kind: tuple[tuple[str, str, str, int], ...]  # domain, vocabulary, std, n
    ancestor_rows: int
    ancestor_self_rows: int
    ancestor_max_levels: int
    relationships: tuple[tuple[str, int, int], ...]  # relationship_id, rows, self rows
    non_standard: int
    non_standard_mapped: int
    named_by_id: tuple[str, ...]  # of vocabulary, domain, concept_class: names == ids
    missing_concepts: tuple[tuple[str, str, int], ...]  # table, column, distinct ids


def gather_vocabulary(executor: Executor) -> tuple[VocabularyFacts, tuple[ExampleRun, ...]]:
    """Measure the vocabulary and run every example (raises GroundingError on failure)."""
    present = executor.tables
    table_rows = tuple(
        (t, _scalar(executor, f"SELECT count(*) FROM cdm.{quote(t)}"))
        for t in CDM_TABLES
        if t in VOCABULARY_TABLES and t in present
    )
    kinds = tuple(
        (d, v, s, int(n))
        for d, v, s, n in executor.execute(
            "SELECT domain_id, vocabulary_id, coalesce(standard_concept, ''), count(*) "
            "FROM cdm.concept GROUP BY ALL ORDER BY 1, 2, 3"
        ).rows()
    )
    (anc_rows, anc_self, anc_levels) = executor.execute(
        "SELECT count(*), count(*) FILTER (WHERE ancestor_concept_id = descendant_concept_id), "
        "coalesce(max(max_levels_of_separation), 0) FROM cdm.concept_ancestor"
    ).rows()[0]
    relationships = tuple(
        (r, int(n), int(s))
        for r, n, s in executor.execute(
            "SELECT relationship_id, count(*), "
            "count(*) FILTER (WHERE concept_id_1 = concept_id_2) "
            "FROM cdm.concept_relationship GROUP BY ALL ORDER BY 1"
        ).rows()
    )
    (non_standard, mapped) = executor.execute(
        "SELECT count(*), count(*) FILTER (WHERE EXISTS (SELECT 1 FROM cdm.concept_relationship "
        "AS cr WHERE cr.concept_id_1 = c.concept_id AND cr.relationship_id = 'Maps to' "
        "AND cr.concept_id_2 <> c.concept_id)) "
        "FROM cdm.concept AS c WHERE c.standard_concept IS DISTINCT FROM 'S'"
    ).rows()[0]
    named_by_id = tuple(
        t
        for t, key in (
            ("vocabulary", "vocabulary"),
            ("domain", "domain"),
            ("concept_class", "concept_class"),
        )
        if t in present
        and _scalar(executor, f"SELECT count(*) FROM cdm.{t}") > 0
        and _scalar(
            executor,
            f"SELECT count(*) FILTER (WHERE {key}_name IS DISTINCT FROM {key}_id) FROM cdm.{t}",
        )
        == 0
    )
    return (
        VocabularyFacts(
            table_rows,
            kinds,
            int(anc_rows),
            int(anc_self),
            int(anc_levels),
            relationships,
            int(non_standard),
            int(mapped),
            named_by_id,
            _missing_concepts(executor),
        ),
        tuple(
            run_example(executor, e.sql, what=f"vocabulary example {e.title!r}") for e in EXAMPLES
        ),
    )


def _scalar(executor: Executor, sql: str) -> int:
    return int(executor.execute(sql).rows()[0][0])


def _missing_concepts(executor: Executor) -> tuple[tuple[str, str, int], ...]:
    """(table, column, distinct ids) for concept ids clinical tables use but concept lacks."""
    found = []
    for table in CDM_TABLES:
        if table in VOCABULARY_TABLES or table not in executor.tables:
            continue
        for col, dtype, _ in CDM_TABLES[table]:
            if not col.endswith("concept_id") or dtype != "INTEGER":
                continue
            q = quote(col)
            n = _scalar(
                executor,
                f"SELECT count(DISTINCT t.{q}) FROM cdm.{quote(table)} AS t "
                f"WHERE t.{q} IS NOT NULL AND NOT EXISTS "
                f"(SELECT 1 FROM cdm.concept AS c WHERE c.concept_id = t.{q})",
            )
            if n:
                found.append((table, col, n))
    return tuple(found)


# -- rendering (pure) ---------------------------------------------------------------


def render_vocabulary(
    facts: VocabularyFacts, runs: tuple[ExampleRun, ...], examples=EXAMPLES
) -> str:
    """The vocabulary document from measured facts and the examples' runs."""
    if len(runs) != len(examples):
        raise ValueError(f"{len(runs)} runs for {len(examples)} examples")
    parts = [
        _intro(),
        _has_and_lacks(facts),
        _concept_counts(facts),
    ]
    for i, (example, run) in enumerate(zip(examples, runs, strict=True), start=1):
        parts.append(f"## Example {i}: {example.title}\n\n{example.text}\n\n{render_run(run)}")
    return "\n\n".join(parts) + "\n"


def _intro() -> str:
    return "\n".join(
        [
            "# Using the OMOP vocabulary tables on the benchmark database",
            "",
            "In an OMOP CDM database every clinical fact is coded with a *concept*: an "
            "integer id with a row in `cdm.concept` giving its name, domain (Condition, "
            "Drug, Measurement, ...), vocabulary (SNOMED, RxNorm, LOINC, ...), class and "
            "whether it is *standard*. The other vocabulary tables relate concepts to "
            "each other: `cdm.concept_relationship` (for example 'Maps to', from a source "
            "code to the standard concept to use) and `cdm.concept_ancestor` (every "
            "ancestor-descendant pair of the hierarchy, so that 'all kinds of X' is one "
            "join).",
            "",
            "This document says what this database's vocabulary actually holds, then "
            "works through the usual query patterns. Every example query below was run "
            "on the database when this document was generated, and its first rows are "
            "shown. Generated by `sqlgold grounding`; do not edit by hand.",
        ]
    )


def _has_and_lacks(f: VocabularyFacts) -> str:
    rows = dict(f.table_rows)
    total = sum(n for _, _, _, n in f.concepts_by_kind)
    standard = sum(n for _, _, s, n in f.concepts_by_kind if s == "S")
    concept_line = f"- `cdm.concept` has {plural(total, 'concept')}, {standard:,} of them standard"
    if f.named_by_id:  # a vocabulary derived from the data's concept table
        concept_line += (
            ": the concepts the data use, not a full vocabulary release. A concept "
            "missing here cannot be looked up by name."
        )
    has = [concept_line + ("" if f.named_by_id else ".")]
    lacks = []
    non_self = f.ancestor_rows - f.ancestor_self_rows
    if f.ancestor_rows and non_self == 0:
        has.append(
            f"- `cdm.concept_ancestor` has {plural(f.ancestor_rows, 'row')}, one for each "
            "standard concept as its own ancestor at level 0."
        )
        lacks.append(
            "- No hierarchy: `cdm.concept_ancestor` has no row linking a concept to a "
            "different one, so a 'descendants of X' query finds X alone, and a general "
            "concept (e.g. 'Diabetes mellitus') finds none of its specific kinds. Group "
            f"related concepts by name instead ({_example_ref('no hierarchy')})."
        )
    elif f.ancestor_rows:
        has.append(
            f"- `cdm.concept_ancestor` has {plural(f.ancestor_rows, 'row')}, "
            f"{non_self:,} of them linking different concepts, up to "
            f"{f.ancestor_max_levels} levels apart."
        )
    else:
        lacks.append("- `cdm.concept_ancestor` is empty: no hierarchy at all.")
    if f.relationships:
        listed = ", ".join(
            f"'{r}' ({plural(n, 'row')}, {s:,} from a concept to itself)"
            for r, n, s in f.relationships
        )
        has.append(f"- `cdm.concept_relationship` has these relationships: {listed}.")
    else:
        lacks.append("- `cdm.concept_relationship` is empty.")
    if f.non_standard and f.non_standard_mapped == 0:
        lacks.append(
            f"- No mappings between different concepts: none of the {f.non_standard:,} "
            "non-standard concepts has a 'Maps to' row to a standard concept. Where the "
            "data could not map a source code, the event row has concept 0 and keeps the "
            "code in its `*_source_value` and `*_source_concept_id` columns "
            f"({_example_ref('Source concepts')})."
        )
    elif f.non_standard:
        has.append(
            f"- {f.non_standard_mapped:,} of the {f.non_standard:,} non-standard concepts "
            "have a 'Maps to' row to a different, standard concept."
        )
    for table in f.named_by_id:
        has.append(
            f"- `cdm.{table}` has one row per id that `cdm.concept` uses "
            f"({plural(rows.get(table, 0), 'row')}); its names repeat the ids, and its "
            "concept ids are 0."
        )
    empty = [t for t, n in f.table_rows if n == 0]
    if empty:
        lacks.append(
            "- Empty vocabulary tables: "
            + ", ".join(f"`cdm.{t}`" for t in empty)
            + ". No synonyms, relationship definitions, drug strengths or local code maps."
        )
    if f.missing_concepts:
        listed = ", ".join(f"`{t}.{c}` ({plural(n, 'id')})" for t, c, n in f.missing_concepts)
        lacks.append(
            "- Concept ids used in the clinical tables but absent from `cdm.concept` "
            f"(a join to concept drops these rows; use a LEFT JOIN to keep them): {listed}."
        )
    return "\n".join(
        [
            "## What this database's vocabulary has",
            "",
            *has,
            "",
            "## What it lacks",
            "",
            *(lacks or ["- Nothing this document checks for."]),
        ]
    )


def _example_ref(title_part: str) -> str:
    """``example N`` for the example whose title contains ``title_part``."""
    for i, e in enumerate(EXAMPLES, start=1):
        if title_part.lower() in e.title.lower():
            return f"example {i}"
    raise KeyError(title_part)


def _concept_counts(f: VocabularyFacts) -> str:
    table = markdown_table(
        ["domain_id", "vocabulary_id", "standard_concept", "concepts"],
        [(d, v, s or "NULL", f"{n:,}") for d, v, s, n in f.concepts_by_kind],
    )
    return (
        "## Concepts by domain, vocabulary and standard flag\n\n"
        "Which kinds of concept `cdm.concept` holds (standard_concept 'S' = standard, "
        "NULL = non-standard):\n\n" + table
    )
