"""Grounding documents: deterministic, current, and true to the database they describe."""

from __future__ import annotations

import datetime as dt
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.grounding.cli import grounding
from curate.grounding.common import GroundingError, atomic_write, run_example
from curate.grounding.documents import (
    DOCS_TODAY,
    DOCUMENTS,
    SCHEMA_DOC,
    SQL_NOTES_DOC,
    VOCABULARY_DOC,
    build_documents,
    generate_documents,
    stale_documents,
    write_documents,
)
from curate.grounding.schema_doc import (
    TABLE_PURPOSES,
    ColumnFacts,
    SchemaFacts,
    TableFacts,
    gather_schema,
    render_schema,
    render_table,
)
from curate.grounding.sql_notes import NOTES, render_rules_section, render_sql_notes
from curate.grounding.vocabulary_doc import EXAMPLES
from score.cdm.duckdb_file import describe_database
from score.cdm.schema import CDM_TABLES
from score.execution.executor import Executor, ExecutorSettings
from tests.paths import REPO

COMMITTED = REPO / "data" / "grounding"


@pytest.fixture(scope="module")
def documents(omop_db: Path) -> dict[str, str]:
    return generate_documents(omop_db)


@pytest.fixture(scope="module")
def docs_executor(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(today=DOCS_TODAY)) as ex:
        yield ex


@pytest.fixture(scope="module")
def schema_facts(docs_executor: Executor) -> SchemaFacts:
    return gather_schema(docs_executor)


def _section(document: str, heading_start: str) -> str:
    """The text of the ``##`` section whose heading starts with ``heading_start``."""
    parts = re.split(r"(?m)^(?=## )", document)
    found = [p for p in parts if p.startswith(heading_start)]
    assert len(found) == 1, f"{len(found)} sections start with {heading_start!r}"
    return found[0]


# -- currency and determinism ----------------------------------------------------------


def test_committed_documents_are_current(omop_db: Path, documents: dict[str, str]) -> None:
    """data/grounding/ holds exactly what `sqlgold grounding` generates from the
    embedded database (the session fixture has the same content fingerprint)."""
    assert f"`{describe_database(omop_db).fingerprint}`" in documents[SCHEMA_DOC]
    stale = stale_documents(COMMITTED, documents)
    assert stale == [], f"stale in data/grounding: {stale}; run `sqlgold grounding`"


def test_generation_is_byte_identical(omop_db: Path, documents: dict[str, str]) -> None:
    again = generate_documents(omop_db)
    assert again == documents
    assert sorted(documents) == sorted(DOCUMENTS)


def test_rewriting_changes_nothing(tmp_path: Path, documents: dict[str, str]) -> None:
    assert sorted(write_documents(tmp_path, documents)) == sorted(DOCUMENTS)
    before = {n: (tmp_path / n).read_bytes() for n in DOCUMENTS}
    mtimes = {n: os.stat(tmp_path / n).st_mtime_ns for n in DOCUMENTS}
    assert write_documents(tmp_path, documents) == []
    assert {n: (tmp_path / n).read_bytes() for n in DOCUMENTS} == before
    assert {n: os.stat(tmp_path / n).st_mtime_ns for n in DOCUMENTS} == mtimes
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(DOCUMENTS)  # no temp files


def test_atomic_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "doc.md"
    assert atomic_write(path, "é\n") is True
    assert path.read_bytes() == "é\n".encode()
    assert atomic_write(path, "é\n") is False
    assert [p.name for p in path.parent.iterdir()] == ["doc.md"]


def test_documents_end_with_one_newline_and_no_trailing_spaces(documents) -> None:
    for name, text in documents.items():
        assert text.endswith("\n") and not text.endswith("\n\n"), name
        assert not re.search(r"[ \t]+\n", text), name


# -- the schema document -----------------------------------------------------------------


def test_every_table_appears_with_its_row_count(omop_db: Path, documents) -> None:
    doc = documents[SCHEMA_DOC]
    info = describe_database(omop_db)
    assert len(info.tables) == len(CDM_TABLES)
    for table in info.tables:
        if table.rows == 0:
            heading = f"## cdm.{table.name} (0 rows, empty)"
        else:
            heading = f"## cdm.{table.name} ({table.rows:,} row{'s' if table.rows != 1 else ''})"
        assert heading + "\n" in doc, heading
        assert f"| cdm.{table.name} | {table.rows:,} |" in doc
        section = _section(doc, f"## cdm.{table.name} (")
        for column, dtype in table.columns:
            assert re.search(rf"(?m)^\| {re.escape(column)} \| {re.escape(dtype)}\b", section)


def test_empty_and_all_null_markers(documents, schema_facts: SchemaFacts) -> None:
    tables = {t.name: t for t in schema_facts.tables}
    assert tables["note"].empty and tables["note"].rows == 0
    assert not tables["person"].empty
    assert {"provider_id", "care_site_id"} <= set(tables["person"].null_columns)
    assert "person_id" not in tables["person"].null_columns
    assert tables["note"].null_columns == ()  # an empty table has no all-NULL marker

    doc = documents[SCHEMA_DOC]
    assert "| cdm.note | 0 | empty |" in doc
    note = _section(doc, "## cdm.note (")
    assert "is empty in this database" in note
    person = _section(doc, "## cdm.person (")
    assert "| provider_id | INTEGER | all NULL |  |" in person
    assert "All NULL in every row: `provider_id`, `care_site_id`." in person
    assert re.search(r"(?m)^\| person_id \| INTEGER, required \| none \| 1, 2, 3, … \|$", person)
    assert "| location_id | INTEGER | some NULL |" in person
    # concept ids are shown with their names
    assert "8507 (MALE)" in person and "8532 (FEMALE)" in person


def test_schema_example_values_are_most_frequent_first(docs_executor, schema_facts) -> None:
    person = {t.name: t for t in schema_facts.tables}["person"]
    gender = {c.name: c for c in person.columns}["gender_concept_id"]
    counts = docs_executor.execute(
        "SELECT gender_concept_id, count(*) FROM cdm.person GROUP BY 1 ORDER BY 2 DESC, 1"
    ).rows()
    assert [e.split(" ")[0] for e in gender.examples] == [str(r[0]) for r in counts]


def test_render_table_ties_and_markers_are_pure() -> None:
    table = TableFacts(
        "death",
        2,
        (
            ColumnFacts("person_id", "INTEGER", True, 2, 2, ("1", "2")),
            ColumnFacts("cause_source_value", "VARCHAR", False, 0, 0, ()),
            ColumnFacts("death_date", "DATE", True, 1, 1, ("2019-01-01",)),
        ),
    )
    text = render_table(table)
    assert text.startswith("## cdm.death (2 rows)\n")
    assert "| cause_source_value | VARCHAR | all NULL |  |" in text
    assert "| death_date | DATE, required | some NULL | 2019-01-01 |" in text
    assert "| person_id | INTEGER, required | none | 1, 2 |" in text
    assert render_table(table) == text
    empty = render_table(
        TableFacts("note", 0, (ColumnFacts("note_id", "INTEGER", True, 0, 0, ()),))
    )
    assert empty.startswith("## cdm.note (0 rows, empty)\n") and "all NULL" not in empty
    doc = render_schema(SchemaFacts("f" * 64, (table,), ("cost",)))
    assert "CDM tables this database lacks: cost." in doc


def test_every_cdm_table_has_a_purpose() -> None:
    assert set(TABLE_PURPOSES) == set(CDM_TABLES)


# -- the vocabulary document -------------------------------------------------------------


def test_vocabulary_examples_all_shown_with_results(documents) -> None:
    doc = documents[VOCABULARY_DOC]
    for i, example in enumerate(EXAMPLES, start=1):
        section = _section(doc, f"## Example {i}: {example.title}")
        assert example.sql.strip() in section
        assert re.search(r"Result \((1 row|[\d,]+ rows|first \d+ of [\d,]+ rows)\):", section)


def test_vocabulary_says_what_the_derived_vocabulary_lacks(documents) -> None:
    doc = documents[VOCABULARY_DOC]
    has = _section(doc, "## What this database's vocabulary has")
    lacks = _section(doc, "## What it lacks")
    assert "754 concepts, 707 of them standard" in has
    assert "own ancestor at level 0" in has
    assert "No hierarchy" in lacks
    assert "none of the 47 non-standard concepts has a 'Maps to' row" in lacks
    assert "`cdm.concept_synonym`" in lacks and "`cdm.drug_strength`" in lacks


def test_an_example_that_fails_or_returns_nothing_stops_generation(docs_executor) -> None:
    with pytest.raises(GroundingError, match="returned no rows"):
        run_example(docs_executor, "SELECT person_id FROM cdm.person WHERE false")
    with pytest.raises(GroundingError, match="catalog_error"):
        run_example(docs_executor, "SELECT no_such_column FROM cdm.person")
    run = run_example(docs_executor, "SELECT person_id FROM cdm.person ORDER BY person_id")
    assert run.total_rows == 1130 and len(run.rows) == 5


def test_build_documents_needs_a_fixed_today(omop_db: Path) -> None:
    with Executor(omop_db) as ex, pytest.raises(GroundingError, match="fixed today"):
        build_documents(ex)


# -- the DuckDB notes --------------------------------------------------------------------


def test_sql_notes_cover_the_transpiler_topics(documents) -> None:
    doc = documents[SQL_NOTES_DOC]
    for topic in (
        "//",
        "DOUBLE",
        "||",
        "DATEADD",
        "date_diff",
        "date_part",
        "LIMIT",
        "COALESCE",
        "CONVERT",
        "DATE 'YYYY-MM-DD'",
        "case-sensitive",
        "GETDATE",
    ):
        assert topic in doc, topic
    for note in NOTES:
        section = _section(doc, f"## {note.title}\n")
        assert note.duckdb.strip() in section
        assert "Result (" in section


def test_every_transpile_rule_is_listed(documents) -> None:
    from curate.transpile.to_duckdb import RULES

    section = _section(documents[SQL_NOTES_DOC], "## What sqlgold's transpiler changes")
    names = re.findall(r"(?m)^\| `([a-z0-9_]+)` \|", section)
    assert names == [r.name for r in RULES]


def test_fixed_today_is_shown(documents) -> None:
    section = _section(documents[SQL_NOTES_DOC], "## GETDATE and a fixed today")
    assert f"| {DOCS_TODAY.isoformat()} |" in section
    assert f"today fixed to {DOCS_TODAY.isoformat()}" in section


class _Rule:
    def __init__(self, name: str, description: str) -> None:
        self.name, self.description = name, description


def _int_division(node):
    """Integer / integer becomes // so the fraction is dropped as in SQL Server."""
    return node


def test_rules_section_from_any_rule_shape() -> None:
    text = render_rules_section(
        [
            _Rule("top_to_limit", "TOP n becomes LIMIT n."),
            ("concat_plus", "'a' + 'b' becomes 'a' || 'b'."),
            {"name": "isnull", "description": "ISNULL(a, b) becomes COALESCE(a, b)."},
            _int_division,
        ]
    )
    assert "| `top_to_limit` | TOP n becomes LIMIT n. |" in text
    assert "| `concat_plus` | 'a' + 'b' becomes 'a' \\|\\| 'b'. |" in text
    assert "| `isnull` | ISNULL(a, b) becomes COALESCE(a, b). |" in text
    assert "| `_int_division` | Integer / integer becomes //" in text
    with pytest.raises(TypeError):
        render_rules_section([42])


def test_render_sql_notes_with_and_without_rules(docs_executor) -> None:
    from curate.grounding.sql_notes import run_notes

    runs = run_notes(docs_executor)
    today = dt.date(2019, 12, 31)
    plain = render_sql_notes(runs, today)
    with_rules = render_sql_notes(runs, today, [("r1", "does one thing")])
    assert "What sqlgold's transpiler changes" not in plain
    assert with_rules.startswith(plain.rstrip("\n"))
    assert with_rules.endswith("| `r1` | does one thing |\n")


# -- the command -------------------------------------------------------------------------


def test_cli_writes_then_check_passes_then_detects_stale(omop_db: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "grounding"
    result = runner.invoke(grounding, ["--db", str(omop_db), "--out", str(out), "--check"])
    assert result.exit_code == 3  # checked and found stale (not 1, an error)
    for name in DOCUMENTS:
        assert name in result.output

    result = runner.invoke(grounding, ["--db", str(omop_db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == sorted(DOCUMENTS)

    result = runner.invoke(grounding, ["--db", str(omop_db), "--out", str(out), "--check"])
    assert result.exit_code == 0, result.output
    assert "current" in result.output

    (out / VOCABULARY_DOC).write_text("edited by hand\n", encoding="utf-8")
    result = runner.invoke(grounding, ["--db", str(omop_db), "--out", str(out), "--check"])
    assert result.exit_code == 3
    assert VOCABULARY_DOC in result.output and SCHEMA_DOC not in result.output
    assert (out / VOCABULARY_DOC).read_text(encoding="utf-8") == "edited by hand\n"


def test_cli_missing_database_is_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(grounding, ["--db", str(tmp_path / "none.duckdb")])
    assert result.exit_code == 1
    assert result.output.startswith("error: ") and "Traceback" not in result.output


def test_cli_help() -> None:
    result = CliRunner().invoke(grounding, ["--help"])
    assert result.exit_code == 0
    for option in ("--db", "--schema", "--out", "--check"):
        assert option in result.output
