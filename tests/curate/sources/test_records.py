"""Source records: the schema, reading with located problems, deterministic writing."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from curate.sources.records import (
    FORMAT,
    FORMAT_WITH_ALTERNATIVES,
    SCHEMA_PATH,
    Origin,
    SourceProblem,
    SourceRecord,
    UnanswerableBecause,
    check_object,
    parse_lines,
    read_sources,
    source_schema,
    to_json_line,
    write_sources,
)
from score.errors import InputError, SqlgoldError


def obj(**fields: object) -> dict[str, object]:
    base: dict[str, object] = {
        "format": FORMAT,
        "id": "q1",
        "question": "How many persons were born before 1950?",
        "gold_sql": "SELECT COUNT(*) FROM cdm.person WHERE year_of_birth < 1950",
        "gold_dialect": "duckdb",
    }
    base.update(fields)
    return {k: v for k, v in base.items() if v is not None}


def line(**fields: object) -> str:
    return json.dumps(obj(**fields))


FULL = SourceRecord(
    id="snuh/hard-001",
    question="How many women had a visit in 2020?",
    questions={
        "en": "How many women had a visit in 2020?",
        "ko": "2020년에 방문한 여성은 몇 명입니까?",
    },
    gold_sql="SELECT COUNT(DISTINCT person_id) FROM @cdm.visit_occurrence WHERE x = @y",
    gold_dialect="ohdsi",
    answer_sql="SELECT 1",
    answer_dialect="duckdb",
    parameters={"y": 2020, "ids": [1, 2]},
    category="cohort_count",
    difficulty="hard",
    notes="rewritten from the page's example",
    order_matters=False,
    origin=Origin(importer="manual", file="a.jsonl", line=3),
)

UNANSWERABLE = SourceRecord(
    id="u1",
    question="What was the cost of each visit?",
    answerable=False,
    unanswerable_because=UnanswerableBecause(
        empty_tables=("cost",), null_columns=("visit_occurrence.visit_source_value",)
    ),
)


def test_schema_is_valid_draft_2020_12_with_id_and_version() -> None:
    schema = source_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"]
    assert schema["properties"]["format"]["enum"] == [FORMAT, FORMAT_WITH_ALTERNATIVES]
    assert SCHEMA_PATH.name == "source.schema.json"


@pytest.mark.parametrize("record", [FULL, UNANSWERABLE], ids=["full", "unanswerable"])
def test_a_record_survives_writing_and_reading(tmp_path: Path, record: SourceRecord) -> None:
    path = tmp_path / "s.jsonl"
    write_sources(path, [record])
    records, problems = read_sources(path)
    assert problems == []
    assert records == [record]


def test_writing_is_deterministic_sorted_and_leaves_no_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    write_sources(path, [FULL, UNANSWERABLE])
    first = path.read_bytes()
    write_sources(path, [FULL, UNANSWERABLE])
    assert path.read_bytes() == first
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]
    text = first.decode("utf-8")
    assert "2020년" in text  # UTF-8 kept, not \u-escaped
    for raw in text.splitlines():
        keys = list(json.loads(raw))
        assert keys == sorted(keys)
    assert [json.loads(raw)["id"] for raw in text.splitlines()] == ["snuh/hard-001", "u1"]


def test_defaults_are_not_written() -> None:
    out = json.loads(
        to_json_line(SourceRecord(id="a", question="q?", gold_sql="SELECT 1", gold_dialect="tsql"))
    )
    assert out == {
        "format": FORMAT,
        "id": "a",
        "question": "q?",
        "gold_sql": "SELECT 1",
        "gold_dialect": "tsql",
    }


def test_write_refuses_invalid_records_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    bad = SourceRecord(id="b", question="q?", gold_sql="SELECT 1", gold_dialect="mysql")
    with pytest.raises(SourceProblem) as err:
        write_sources(path, [FULL, bad])
    assert err.value.json_path == "$.gold_dialect" and err.value.line == 2
    with pytest.raises(SourceProblem, match="duplicate id"):
        write_sources(path, [FULL, FULL])
    assert not path.exists()


def test_malformed_json_is_reported_with_its_line() -> None:
    records, problems = parse_lines([line(), "", '{"id": "q2",'], path="s.jsonl")
    assert [r.id for r in records] == ["q1"]
    (p,) = problems
    assert (p.reason, p.path, p.line, p.stage) == ("malformed_json", "s.jsonl", 3, "import")
    assert isinstance(p, InputError) and isinstance(p, SqlgoldError)


def test_duplicate_ids_name_the_first_line() -> None:
    records, problems = parse_lines([line(), line(), line(id="q2")], path="s.jsonl")
    assert [r.id for r in records] == ["q1", "q2"]
    (p,) = problems
    assert (p.reason, p.line, p.task_id) == ("duplicate_id", 2, "q1")
    assert "first on line 1" in str(p)


def test_schema_violation_names_file_line_id_and_json_path() -> None:
    _, problems = parse_lines([line(), line(id="q2", answerable="no")], path="s.jsonl")
    (p,) = problems
    assert (p.reason, p.line, p.task_id, p.json_path) == ("schema", 2, "q2", "$.answerable")
    assert str(p).startswith("[import] s.jsonl:2 (task q2): $.answerable: ")


@pytest.mark.parametrize(
    ("fields", "reason", "json_path"),
    [
        ({"format": "sqlgold.source/3"}, "unknown_format", "$.format"),
        ({"format": None}, "schema", "$"),
        ({"gold_dialect": None}, "schema", "$"),
        ({"gold_sql": None, "gold_dialect": None}, "schema", "$"),
        ({"question": "   "}, "schema", "$.question"),
        ({"id": "has space"}, "schema", "$.id"),
        ({"extra": 1}, "schema", "$"),
        ({"answer_sql": "SELECT 1"}, "schema", "$"),
        ({"questions": {"english": "x"}}, "schema", "$.questions"),
        ({"questions": {"en": "another question"}}, "inconsistent_question", "$.questions.en"),
        ({"parameters": {"bad-name": 1}}, "schema", "$.parameters"),
        ({"parameters": {"x": {"nested": 1}}}, "schema", "$.parameters.x"),
        ({"answerable": False}, "schema", "$"),
        ({"unanswerable_because": {"empty_tables": ["cost"]}}, "schema", "$"),
        (
            {"answerable": False, "unanswerable_because": {"empty_tables": []}},
            "schema",
            "$.unanswerable_because",
        ),
        (
            {"answerable": False, "unanswerable_because": {"empty_tables": ["costs"]}},
            "unknown_table",
            "$.unanswerable_because.empty_tables[0]",
        ),
        (
            {"answerable": False, "unanswerable_because": {"null_columns": ["person.age"]}},
            "unknown_column",
            "$.unanswerable_because.null_columns[0]",
        ),
        ({"origin": {"file": "x"}}, "schema", "$.origin"),
    ],
)
def test_what_the_checks_refuse(fields: dict, reason: str, json_path: str) -> None:
    problems = check_object(obj(**fields), path="s.jsonl", line=7)
    assert problems, fields
    assert problems[0].reason == reason
    assert json_path in {p.json_path for p in problems}
    assert all(p.line == 7 and p.path == "s.jsonl" for p in problems)


def test_an_unanswerable_record_may_keep_its_gold_sql() -> None:
    fields = {"answerable": False, "unanswerable_because": {"empty_tables": ["cost"]}}
    assert check_object(obj(**fields)) == []
    assert check_object(obj(gold_sql=None, gold_dialect=None, **fields)) == []


def test_an_unreadable_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="cannot read"):
        read_sources(tmp_path / "missing.jsonl")
