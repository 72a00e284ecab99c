"""The QueryLibrary importer on the real pages (../shared) and on small pages made here."""

from __future__ import annotations

from pathlib import Path

import pytest

from curate.sources.load import load_sources
from curate.sources.querylibrary import parse_page
from curate.sources.records import SourceProblem, SourceRecord, check_object


def page(body: str, *, title: str = "# X01: Count persons") -> str:
    return f"<!---\nGroup:person\nName:X01 Count persons\n-->\n{title}\n{body}"


@pytest.fixture(scope="module")
def imported(querylibrary_dir: Path) -> tuple[list[SourceRecord], list[SourceProblem]]:
    return load_sources(querylibrary_dir, "querylibrary")


def test_every_real_page_is_one_valid_record(querylibrary_dir, imported) -> None:
    records, problems = imported
    pages = sorted(querylibrary_dir.rglob("*.md"))
    assert problems == []
    assert len(records) == len(pages) > 0
    assert len({r.id for r in records}) == len(records)
    for record in records:
        assert check_object(record.to_dict()) == []
        assert record.id.startswith("querylibrary/")
        assert record.gold_dialect == "ohdsi" and record.gold_sql
        assert "```" not in record.gold_sql
        assert record.question and "\n" not in record.question
        assert record.origin is not None and record.origin.importer == "querylibrary"
        assert (querylibrary_dir / record.origin.file).is_file()


def test_records_come_in_sorted_file_order(imported) -> None:
    files = [r.origin.file for r in imported[0]]
    assert files == sorted(files)


def test_a_real_page_in_detail(imported) -> None:
    c01 = next(r for r in imported[0] if r.id == "querylibrary/C01")
    assert c01.question.startswith("Find condition by concept ID. ")
    assert "concept identifier" in c01.question
    assert c01.gold_sql.startswith("SELECT") and "@vocab.concept" in c01.gold_sql
    assert dict(c01.parameters) == {"concept_id": "192671"}
    assert c01.category == "condition"
    assert c01.notes and "sample run" in c01.notes
    assert c01.origin.file == "condition/C01.md" and c01.origin.page == "C01"


def test_real_page_quirks(imported) -> None:
    by_id = {r.id: r for r in imported[0]}
    # the heading's code wins over a misnamed file (procedure/PO2.md is P02)
    assert by_id["querylibrary/P02"].origin.file == "procedure/PO2.md"
    # "# CO08 :Title" headings
    assert by_id["querylibrary/CO08"].question.startswith("Duration of hospitalization")
    # no "## Description" heading: the prose under the title is the description
    assert "concept code" in by_id["querylibrary/G02"].question
    # "###Input" without a space still is the Input table
    assert dict(by_id["querylibrary/G08"].parameters) == {"concept_id": "192671"}
    # a parameter name repeated in the table keeps every row
    assert {"concept_code", "concept_code_2", "concept_code_3"} <= set(
        by_id["querylibrary/COC10"].parameters
    )


def test_a_page_without_sql_is_a_named_problem() -> None:
    result = parse_page(page("## Query\nNo query here.\n"), name="x.md")
    assert isinstance(result, SourceProblem)
    assert (result.reason, result.task_id, result.line) == ("no_sql_block", "querylibrary/X01", 5)


def test_a_page_with_two_sql_blocks_is_a_named_problem() -> None:
    body = "## Query\n```sql\nSELECT 1;\n```\ntext\n```sql\nSELECT 2;\n```\n"
    result = parse_page(page(body), name="x.md", path="/tmp/x.md")
    assert isinstance(result, SourceProblem)
    assert result.reason == "several_sql_blocks"
    assert result.path == "/tmp/x.md" and result.line == 11
    assert "lines 7, 11" in str(result)


def test_other_code_blocks_and_a_missing_title() -> None:
    body = "## Query\n```\nnot sql\n```\n```SQL\nSELECT 1\n```\n"
    result = parse_page(page(body), name="x.md")
    assert isinstance(result, SourceRecord) and result.gold_sql == "SELECT 1"
    untitled = parse_page("## Query\n```sql\nSELECT 1\n```\n", name="dir/Y7.md")
    assert isinstance(untitled, SourceProblem) and untitled.reason == "no_title"
    named = parse_page("<!---\nName:Y7 Persons\n-->\n```sql\nSELECT 1\n```\n", name="Y7.md")
    assert isinstance(named, SourceRecord) and named.id == "querylibrary/Y7"


def test_an_empty_sql_block_is_a_named_problem() -> None:
    result = parse_page(page("## Query\n```sql\n\n```\n"), name="x.md")
    assert isinstance(result, SourceProblem) and result.reason == "empty_sql_block"


def test_load_sources_reads_one_page_file(tmp_path: Path) -> None:
    path = tmp_path / "X01.md"
    path.write_text(page("## Query\n```sql\nSELECT COUNT(*) FROM @cdm.person\n```\n"))
    records, problems = load_sources(path, "querylibrary")
    assert problems == [] and [r.id for r in records] == ["querylibrary/X01"]
    assert records[0].origin.file == "X01.md" and records[0].origin.line == 7
