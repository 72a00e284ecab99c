"""The TEXT-TO-OMOP importer: its real test set (../shared) and small files made here."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from click.testing import CliRunner

from curate.cli import main
from curate.sources.load import load_sources
from curate.sources.records import write_sources
from curate.sources.text2omop import DECLARED, parse_text
from score.inputs.task_set import load_tasks
from score.inputs.text2omop import content_id


def jsonl(*rows: object) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows)


GOLD = "SELECT COUNT(*) AS n FROM person WHERE year_of_birth < 1950;"
ITEMS = [
    {"input": "How many patients born before <YEAR>1950</YEAR>?", "output": GOLD},
    {
        "input": "What is the phone number of patient <PERSON_ID>7</PERSON_ID>?",
        "output": "<NO_SQL>",
    },
]


def test_the_published_test_set_imports_whole(shared_dir: Path) -> None:
    path = shared_dir / "corpora" / "text2omop" / "test.jsonl"
    records, problems = load_sources(path, "text2omop")
    assert problems == [] and len(records) == 1162
    assert len({r.id for r in records}) == 1162
    answerable = [r for r in records if r.answerable]
    assert len(records) - len(answerable) == 232
    assert {r.gold_dialect for r in answerable} == {"postgres"}
    assert len({r.gold_sql for r in answerable}) == 186
    # the tagged values stay in the questions, and every line is one record, in order
    assert sum("<DRUG>" in r.question for r in records) > 0
    assert [r.origin.line for r in records] == list(range(1, 1163))
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [r.question for r in records] == [x["input"].strip() for x in lines]


def test_an_answerable_item_is_postgresql_and_an_unanswerable_one_is_declared() -> None:
    records, problems = parse_text(jsonl(*ITEMS), name="test.jsonl")
    assert problems == []
    first, second = records
    assert first.question == ITEMS[0]["input"] and first.gold_sql == GOLD
    assert (first.gold_dialect, first.answerable) == ("postgres", True)
    assert (first.origin.importer, first.origin.file, first.origin.line) == (
        "text2omop",
        "test.jsonl",
        1,
    )
    assert second.answerable is False and second.gold_sql is None
    assert second.unanswerable_because.declared == DECLARED
    assert second.unanswerable_because.empty_tables == ()


def test_ids_come_from_the_content_not_the_line() -> None:
    forward, _ = parse_text(jsonl(*ITEMS), name="a.jsonl")
    backward, _ = parse_text(jsonl("", *reversed(ITEMS)), name="b.jsonl")
    assert {r.id for r in forward} == {r.id for r in backward}
    assert forward[0].id == content_id(ITEMS[0]["input"], GOLD)
    # surrounding space is not content: the inference scripts strip both fields
    spaced = {"input": "  " + ITEMS[0]["input"] + "\n", "output": GOLD + "  "}
    assert parse_text(jsonl(spaced), name="c.jsonl")[0][0].id == forward[0].id


def test_repeated_questions_are_kept_apart() -> None:
    other_gold = {"input": ITEMS[0]["input"], "output": "SELECT 2;"}
    records, problems = parse_text(jsonl(ITEMS[0], other_gold, ITEMS[0]), name="t.jsonl")
    assert problems == []
    first, other, again = (r.id for r in records)
    assert len({first, other, again}) == 3
    assert again == f"{first}-2" and not other.startswith(first)


def test_lines_that_cannot_be_read_are_problems_with_their_line() -> None:
    text = jsonl(
        ITEMS[0],
        "{oops",
        {"input": "Q?"},
        {"input": "Q?", "output": None},
        ["not", "an", "object"],
        {"input": "   ", "output": "SELECT 1;"},
    )
    records, problems = parse_text(text, name="t.jsonl", path="data/t.jsonl")
    assert [r.origin.line for r in records] == [1]
    assert sorted({(p.reason, p.line) for p in problems}, key=lambda x: x[1]) == [
        ("malformed_json", 2),
        ("missing_field", 3),
        ("schema", 4),
        ("schema", 5),
        ("schema", 6),  # a question of spaces only is no question ($.question)
    ]
    assert str(problems[1]) == "[import] data/t.jsonl:3: no field 'output'"
    assert "'output' is not a string (null)" in str(problems[2])


def test_imported_records_are_valid_source_records(tmp_path: Path) -> None:
    records, _ = parse_text(jsonl(*ITEMS), name="t.jsonl")
    write_sources(tmp_path / "s.jsonl", records)  # checks each against the schema
    again, problems = load_sources(tmp_path / "s.jsonl", "jsonl")
    assert problems == [] and again == records


def test_curation_keeps_unqualified_postgresql_golds_and_declared_unanswerables(
    omop_db: Path, tmp_path: Path
) -> None:
    source = tmp_path / "test.jsonl"
    empty = {
        "input": "Which drugs did patient <PERSON_ID>1</PERSON_ID> take?",
        "output": "SELECT DISTINCT drug_concept_id FROM drug_exposure WHERE person_id = -1;",
    }
    source.write_text(jsonl(*ITEMS, empty))
    out = tmp_path / "tasks.jsonl"
    args = ["curate", str(source), "--format", "text2omop", "--db", str(omop_db)]
    args += ["--out", str(out), "-q"]
    strict = CliRunner().invoke(main, args)
    assert strict.exit_code == 0, strict.output
    assert "verify/min_rows" in strict.output  # the empty gold, under the default rules
    loose = CliRunner().invoke(main, [*args, "--min-rows", "0", "--allow-all-zero"])
    assert loose.exit_code == 0, loose.output
    tasks = {t["id"]: t for t in load_tasks(out)}
    assert len(tasks) == 3
    by_question = {t["question"]: t for t in tasks.values()}
    counted = by_question[ITEMS[0]["input"]]
    assert counted["source_dialect"] == "postgres" and counted["source_sql"] == GOLD
    assert "cdm.person" in counted["gold_sql"] and counted["gold_result"]["rows"] == 1
    assert by_question[empty["input"]]["gold_result"]["rows"] == 0
    phone = by_question[ITEMS[1]["input"]]
    assert phone["answerable"] is False and phone["tier"] == "unanswerable"
    assert phone["unanswerable_because"] == {"empty_tables": [], "null_columns": []}
    assert "declared by its source" in phone["notes"]
    assert Counter(t["answerable"] for t in tasks.values()) == {True: 2, False: 1}
