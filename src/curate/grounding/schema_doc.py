"""The schema grounding document: every CDM table of the database, as it actually is.

:func:`gather_schema` asks the database (through the read-only executor) for each
table's columns, types, row count, and per column the number of non-NULL and distinct
values and its most frequent values (ties broken by value, so the choice is
deterministic).  :func:`render_schema` turns those facts into Markdown: an overview,
then one ``##`` section per table that stands on its own when a retriever cuts the
document into chunks.

Example values of ``*_concept_id`` columns are shown with the concept's name, the way
a reader needs them to write a filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from curate.grounding.common import format_value, markdown_table, plural
from score.cdm.duckdb_file import quote
from score.cdm.schema import CDM_TABLES, CDM_VERSION, VOCABULARY_TABLES
from score.execution.executor import Executor

#: How many of a column's most frequent values the document shows.
EXAMPLE_VALUES = 3

#: What each CDM table records, in a line (sqlgold's own wording).
TABLE_PURPOSES: dict[str, str] = {
    "person": "One row per patient: sex, year/month/day of birth, race, ethnicity, home location.",
    "observation_period": "Spans of time during which a person's records are expected "
    "to be complete; events outside them may be missing.",
    "visit_occurrence": "Encounters with the health system (inpatient stays, outpatient "
    "and emergency visits) with start and end dates.",
    "visit_detail": "Finer parts of a visit, such as transfers between units.",
    "condition_occurrence": "Diagnoses, problems and findings recorded for a person, with "
    "start (and sometimes end) dates.",
    "drug_exposure": "Medicines and vaccines given, prescribed or dispensed, at the level "
    "of the product the record names.",
    "procedure_occurrence": "Procedures and interventions carried out on a person.",
    "device_exposure": "Devices used by or implanted in a person.",
    "measurement": "Lab results and vital signs: a concept, a date and usually a numeric "
    "or coded value with a unit.",
    "observation": "Other facts about a person that fit no other table (history, "
    "social circumstances, allergies, ...).",
    "death": "At most one row per person who died: date, type and cause of death.",
    "note": "Free-text clinical notes.",
    "note_nlp": "Terms extracted from notes by natural-language processing.",
    "specimen": "Biological samples taken from a person.",
    "fact_relationship": "Links between two records in any tables (e.g. a mother and her child).",
    "location": "Addresses or places (at least the region) that persons, care sites "
    "and providers refer to.",
    "care_site": "Places where care is given (practices, hospital units).",
    "provider": "Clinicians and other care givers.",
    "payer_plan_period": "Spans of time a person was covered by an insurance plan.",
    "cost": "Charges, costs and payments attached to events in other tables.",
    "drug_era": "Continuous spans of exposure to one drug ingredient per person, "
    "derived from drug_exposure.",
    "dose_era": "Spans of constant dose of one ingredient per person.",
    "condition_era": "Continuous spans of one condition per person, derived from "
    "condition_occurrence.",
    "episode": "Abstractions over several events, such as a line of cancer treatment.",
    "episode_event": "Which events belong to which episode.",
    "metadata": "Facts about the data set itself.",
    "cdm_source": "Where the data came from and which CDM and vocabulary versions they use.",
    "concept": "Every coded term (conditions, drugs, units, types, sexes, ...): its id, "
    "name, domain, vocabulary, class and whether it is standard.",
    "vocabulary": "The vocabularies concepts come from (SNOMED, RxNorm, LOINC, ...).",
    "domain": "The domains concepts belong to (Condition, Drug, Measurement, ...).",
    "concept_class": "The classes within vocabularies (Clinical Finding, Ingredient, ...).",
    "concept_relationship": "Pairs of concepts and how they relate (e.g. 'Maps to' from "
    "a source code to a standard concept).",
    "relationship": "The kinds of relationship concept_relationship uses.",
    "concept_synonym": "Other names of concepts.",
    "concept_ancestor": "Every ancestor-descendant pair of the concept hierarchy, with "
    "the number of levels between them.",
    "source_to_concept_map": "Local codes mapped to standard concepts by the data's owner.",
    "drug_strength": "Amount of each ingredient in a drug product.",
    "cohort": "Persons in a cohort and the dates they were in it.",
    "cohort_definition": "The definitions of cohorts.",
}


@dataclass(frozen=True)
class ColumnFacts:
    name: str
    type: str
    required: bool  # NOT NULL in the CDM specification
    non_null: int
    distinct: int
    examples: tuple[str, ...]  # formatted, most frequent first


@dataclass(frozen=True)
class TableFacts:
    name: str
    rows: int
    columns: tuple[ColumnFacts, ...]

    @property
    def empty(self) -> bool:
        return self.rows == 0

    @property
    def null_columns(self) -> tuple[str, ...]:
        """Columns of a non-empty table that hold only NULL."""
        if self.empty:
            return ()
        return tuple(c.name for c in self.columns if c.non_null == 0)


@dataclass(frozen=True)
class SchemaFacts:
    fingerprint: str
    tables: tuple[TableFacts, ...]  # in CDM order
    missing: tuple[str, ...]  # CDM tables the database lacks


# -- gathering (the only part that reads the database) ------------------------------


def gather_schema(executor: Executor, *, examples: int = EXAMPLE_VALUES) -> SchemaFacts:
    """Columns, counts and most frequent values of every CDM table ``executor`` exposes."""
    tables: list[TableFacts] = []
    concept_ids: set[int] = set()
    raw: list[tuple[str, int, list[tuple[str, str, bool, int, int, list]]]] = []
    for name in (t for t in CDM_TABLES if t in executor.tables):
        source = f"cdm.{quote(name)}"
        shape = executor.execute(f"SELECT * FROM {source} LIMIT 0")
        required = {c: req for c, _, req in CDM_TABLES[name]}
        counts = ["count(*)"]
        for col in shape.columns:
            counts += [f"count({quote(col)})", f"count(DISTINCT {quote(col)})"]
        (stats,) = executor.execute(f"SELECT {', '.join(counts)} FROM {source}").rows()
        rows = int(stats[0])
        columns = []
        for i, (col, dtype) in enumerate(zip(shape.columns, shape.types, strict=True)):
            non_null, distinct = int(stats[1 + 2 * i]), int(stats[2 + 2 * i])
            top: list = []
            if non_null:
                q = quote(col)
                top = [
                    r[0]
                    for r in executor.execute(
                        f"SELECT {q} FROM {source} WHERE {q} IS NOT NULL "
                        f"GROUP BY {q} ORDER BY count(*) DESC, {q} LIMIT {int(examples)}"
                    ).rows()
                ]
                if _is_concept_column(col, dtype):
                    concept_ids.update(int(v) for v in top)
            columns.append((col, dtype, required.get(col.lower(), False), non_null, distinct, top))
        raw.append((name, rows, columns))
    names = _concept_names(executor, concept_ids)
    for name, rows, columns in raw:
        facts = []
        for col, dtype, req, non_null, distinct, top in columns:
            if _is_concept_column(col, dtype):
                shown = tuple(f"{v} ({names.get(int(v), 'not in concept')})" for v in top)
            else:
                shown = tuple(format_value(v) for v in top)
            facts.append(ColumnFacts(col, dtype, req, non_null, distinct, shown))
        tables.append(TableFacts(name, rows, tuple(facts)))
    missing = tuple(t for t in CDM_TABLES if t not in executor.tables)
    return SchemaFacts(executor.fingerprint, tuple(tables), missing)


def _is_concept_column(name: str, dtype: str) -> bool:
    return name.lower().endswith("concept_id") and dtype in ("INTEGER", "BIGINT")


def _concept_names(executor: Executor, ids: set[int]) -> dict[int, str]:
    if not ids or "concept" not in executor.tables:
        return {}
    listed = ", ".join(str(i) for i in sorted(ids))
    rows = executor.execute(
        f"SELECT concept_id, concept_name FROM cdm.concept WHERE concept_id IN ({listed})"
    ).rows()
    return {int(i): format_value(n, max_text=80) for i, n in rows}


# -- rendering (pure) ---------------------------------------------------------------


def render_schema(facts: SchemaFacts) -> str:
    """The schema document: overview, conventions, then one section per table."""
    parts = [_header(facts), _overview(facts), _conventions()]
    parts += [render_table(t) for t in facts.tables]
    return "\n\n".join(parts) + "\n"


def _header(facts: SchemaFacts) -> str:
    populated = sum(1 for t in facts.tables if not t.empty)
    lines = [
        "# OMOP CDM schema of the benchmark database",
        "",
        f"The OMOP Common Data Model (CDM) v{CDM_VERSION} tables of the DuckDB database "
        "the benchmark runs on, as they actually are: every table and column with its "
        "type, how many rows it has, which tables are empty and which columns hold only "
        "NULL, and the most frequent values of each column.",
        "",
        "Write every table as `cdm.<table>` (for example `cdm.person`). "
        f"{len(facts.tables)} tables exist; {populated} have rows.",
        "",
        f"Database content fingerprint: `{facts.fingerprint}`.",
        "Generated by `sqlgold grounding`; do not edit by hand.",
    ]
    if facts.missing:
        lines += ["", f"CDM tables this database lacks: {', '.join(facts.missing)}."]
    return "\n".join(lines)


def _overview(facts: SchemaFacts) -> str:
    rows = []
    for t in facts.tables:
        if t.empty:
            status = "empty"
        elif t.null_columns:
            status = f"{len(t.null_columns)} of {len(t.columns)} columns all NULL"
        else:
            status = "every column has values"
        rows.append((f"cdm.{t.name}", f"{t.rows:,}", status))
    return "## Tables at a glance\n\n" + markdown_table(["table", "rows", "status"], rows)


def _conventions() -> str:
    return "\n".join(
        [
            "## How the tables fit together",
            "",
            "- `person_id` links every clinical table to `cdm.person`; "
            "`visit_occurrence_id` links events to the visit they happened in.",
            "- A column ending in `_concept_id` holds a concept id: join it to "
            "`cdm.concept.concept_id` to get the concept's name, domain and vocabulary. "
            "Concept id 0 means the source value could not be coded.",
            "- A `*_source_value` column keeps the code or text of the source record; a "
            "`*_source_concept_id` column holds the concept of that source code, which "
            "need not be a standard concept (see the vocabulary document).",
            "- A `*_type_concept_id` column says where a record came from (an EHR "
            "encounter diagnosis, a prescription written, ...), not what it is about.",
            "- Dates are DATE, date-times are TIMESTAMP; `*_date` columns are the ones to "
            "filter and group on.",
            "- The era tables (`condition_era`, `drug_era`) are derived summaries: "
            "`drug_era.drug_concept_id` is an ingredient, while "
            "`drug_exposure.drug_concept_id` is the product that was recorded.",
        ]
    )


def render_table(t: TableFacts) -> str:
    """One table's section: purpose, size, empty and all-NULL markers, columns."""
    state = "empty" if t.empty else plural(t.rows, "row")
    if t.empty:
        heading = f"## cdm.{t.name} (0 rows, empty)"
    else:
        heading = f"## cdm.{t.name} ({state})"
    kind = "vocabulary table" if t.name in VOCABULARY_TABLES else "table"
    lines = [heading, ""]
    purpose = TABLE_PURPOSES.get(t.name)
    if purpose:
        lines += [f"{purpose}", ""]
    if t.empty:
        lines += [
            f"The {kind} `cdm.{t.name}` is empty in this database: any query that needs "
            "its rows returns nothing. Its columns:",
            "",
            markdown_table(
                ["column", "type", "required"],
                [(c.name, c.type, "yes" if c.required else "") for c in t.columns],
            ),
        ]
        return "\n".join(lines)
    lines.append(f"The {kind} `cdm.{t.name}` has {plural(t.rows, 'row')}.")
    if t.null_columns:
        listed = ", ".join(f"`{c}`" for c in t.null_columns)
        lines.append(f"All NULL in every row: {listed}.")
    lines += [
        "",
        "NULLs: whether the column has NULL in some rows. Values: the most frequent "
        "values, most frequent first (ties by value); `…` means there are more.",
        "",
        markdown_table(
            ["column", "type", "NULLs", "values"],
            [
                (
                    c.name,
                    c.type + (", required" if c.required else ""),
                    _nulls(c, t.rows),
                    _examples(c),
                )
                for c in t.columns
            ],
        ),
    ]
    return "\n".join(lines)


def _nulls(c: ColumnFacts, rows: int) -> str:
    if c.non_null == 0:
        return "all NULL"
    return "some NULL" if c.non_null < rows else "none"


def _examples(c: ColumnFacts) -> str:
    shown = ", ".join(c.examples)
    return shown + (", …" if c.distinct > len(c.examples) else "")
