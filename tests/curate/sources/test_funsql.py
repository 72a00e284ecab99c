"""The FunSQLQueries importer on small files written here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.sources.funsql import FieldMapping, parse_text
from curate.sources.load import load_sources


def jsonl(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


ROWS = [
    {
        "query": "How many persons are there?",
        "sql_query": "SELECT COUNT(*) FROM person",
        "response": "From(:person) |> Group() |> Select(Agg.count())",
    },
    {"query": "List the genders.", "sql_query": "SELECT DISTINCT gender_concept_id FROM person"},
]


def test_default_mapping_and_ids_from_line_numbers() -> None:
    records, problems = parse_text(jsonl(ROWS[0], "", ROWS[1]), name="train.jsonl")
    assert problems == []
    assert [r.id for r in records] == ["funsql/0001", "funsql/0003"]
    first = records[0]
    assert first.question == "How many persons are there?"
    assert first.gold_sql == "SELECT COUNT(*) FROM person" and first.gold_dialect == "tsql"
    assert (first.origin.importer, first.origin.file, first.origin.line) == (
        "funsql",
        "train.jsonl",
        1,
    )


def test_ids_are_the_same_on_every_import() -> None:
    text = jsonl(*ROWS)
    assert [r.to_dict() for r in parse_text(text, name="t.jsonl")[0]] == [
        r.to_dict() for r in parse_text(text, name="t.jsonl")[0]
    ]


def test_a_custom_mapping() -> None:
    rows = [{"nl": "Count persons", "sql": "SELECT 1", "key": "a-1", "group": "simple"}]
    mapping = FieldMapping(question="nl", sql="sql", id="key", category="group")
    records, problems = parse_text(jsonl(*rows), name="t.jsonl", mapping=mapping, dialect="ohdsi")
    assert problems == []
    (r,) = records
    assert (r.id, r.category, r.gold_dialect) == ("a-1", "simple", "ohdsi")


def test_bad_lines_are_problems_with_line_numbers() -> None:
    text = jsonl(
        ROWS[0],
        '{"query": "x",',
        {"query": "no sql"},
        [1, 2],
        {"query": " ", "sql_query": "SELECT 1"},
    )
    records, problems = parse_text(text, name="t.jsonl", path="/data/t.jsonl")
    assert [r.id for r in records] == ["funsql/0001"]
    assert sorted({(p.reason, p.line) for p in problems}, key=lambda x: x[1]) == [
        ("malformed_json", 2),
        ("missing_field", 3),
        ("schema", 4),
        ("schema", 5),
    ]
    assert problems[1].task_id == "funsql/0003" and problems[1].json_path == "$.sql_query"
    assert all(p.path == "/data/t.jsonl" for p in problems)


def test_a_json_array_file_is_read_too() -> None:
    records, problems = parse_text(json.dumps(ROWS, indent=2), name="train.jsonl")
    assert problems == [] and [r.id for r in records] == ["funsql/0001", "funsql/0002"]


def test_bad_settings_fail_loudly() -> None:
    with pytest.raises(ValueError):
        FieldMapping(question="")
    with pytest.raises(ValueError, match="dialect"):
        parse_text("", name="t.jsonl", dialect="mysql")


def test_load_sources_with_options(tmp_path: Path) -> None:
    (tmp_path / "train.jsonl").write_text(jsonl(*ROWS))
    records, problems = load_sources(
        tmp_path / "train.jsonl", "funsql", mapping=FieldMapping(id_prefix="fq/")
    )
    assert problems == [] and [r.id for r in records] == ["fq/0001", "fq/0002"]


def test_repeated_ids_within_a_file(tmp_path: Path) -> None:
    rows = [{"query": "a", "sql_query": "SELECT 1", "id": "x"}] * 2
    (tmp_path / "t.jsonl").write_text(jsonl(*rows))
    records, problems = load_sources(tmp_path, "funsql", mapping=FieldMapping(id="id"))
    assert len(records) == 1
    assert [(p.reason, p.line, p.task_id) for p in problems] == [("duplicate_id", 2, "x")]
