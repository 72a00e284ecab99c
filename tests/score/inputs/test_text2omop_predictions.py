"""TEXT-TO-OMOP result files read as predictions: recognised by their fields, matched to
their tasks by question and gold, bad lines reported by number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.errors import InputError
from score.inputs.predictions import TEXT2OMOP, detect_format, read_predictions
from score.inputs.text2omop import NO_SQL, content_id, evaluated_pred, item_ids
from tests.task_factory import make_task

ITEMS = [
    ("How many persons?", "SELECT COUNT(*) AS n FROM person;"),
    ("How many deaths?", "SELECT COUNT(*) AS n FROM death;"),
    ("Phone of patient <PERSON_ID>1</PERSON_ID>?", NO_SQL),
]


def tasks_for(items) -> list[dict]:
    tasks = []
    for task_id, (question, gold) in zip(item_ids(items), items, strict=True):
        task = make_task(task_id, None if gold == NO_SQL else "SELECT 1 AS n")
        task.update(question=question, questions={"en": question})
        tasks.append(task)
    return tasks


def write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def line(question: str, gold: str, pred: object) -> dict:
    return {"input": question, "gold": gold, "pred": pred}


def test_a_result_file_is_recognised_by_its_fields() -> None:
    assert detect_format([line("Q?", "SELECT 1;", "SELECT 1;")]) == TEXT2OMOP
    assert detect_format([{"task_id": "a", "output": "x"}]) != TEXT2OMOP


def test_each_line_finds_its_task_by_question_and_gold(tmp_path: Path) -> None:
    tasks = tasks_for(ITEMS)
    path = write(
        tmp_path / "results_model.jsonl",
        line(*ITEMS[2], NO_SQL),
        line(*ITEMS[0], "SELECT COUNT(*) FROM person"),
        line(ITEMS[1][0] + "  ", " " + ITEMS[1][1], ""),  # stripped, as the scripts write
    )
    found = read_predictions(path, tasks)
    assert found.format == TEXT2OMOP and found.run == "results_model" and found.problems == []
    by_task = {k[0]: p for k, p in found.by_key.items()}
    assert set(by_task) == {t["id"] for t in tasks}
    first = by_task[content_id(*ITEMS[0])]
    assert (first.kind, first.output, first.line, first.language) == (
        "pred",
        "SELECT COUNT(*) FROM person",
        2,
        "en",
    )
    assert by_task[content_id(*ITEMS[2])].output == NO_SQL
    assert by_task[content_id(*ITEMS[1])].output == ""


def test_repeated_items_are_matched_in_order(tmp_path: Path) -> None:
    items = [ITEMS[0], ITEMS[0]]
    tasks = tasks_for(items)
    path = write(tmp_path / "r.jsonl", line(*ITEMS[0], "first"), line(*ITEMS[0], "second"))
    found = read_predictions(path, tasks)
    ids = item_ids(items)
    assert [found.by_key[(i, "en")].output for i in ids] == ["first", "second"]


def test_lines_without_a_task_are_counted_not_scored(tmp_path: Path) -> None:
    tasks = tasks_for(ITEMS[:2])
    path = write(
        tmp_path / "r.jsonl",
        line(*ITEMS[0], "SELECT 1;"),
        line(*ITEMS[2], NO_SQL),  # an item curation dropped
        line(ITEMS[1][0], "SELECT 2;", "SELECT 2;"),  # another gold: another item
    )
    found = read_predictions(path, tasks)
    assert len(found.by_key) == 1 and found.without_task == 2 and found.problems == []


def test_no_line_matching_any_task_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path / "r.jsonl", line("Other?", "SELECT 9;", "SELECT 9;"))
    with pytest.raises(InputError, match="none of the 1 result lines answers a task"):
        read_predictions(path, tasks_for(ITEMS))


def test_bad_lines_are_problems_with_their_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path / "r.jsonl",
        line(*ITEMS[0], "SELECT 1;"),
        "{oops",
        line(*ITEMS[1], None),
        {"input": ITEMS[1][0], "gold": ITEMS[1][1], "pred": 3},
    )
    found = read_predictions(path, tasks_for(ITEMS))
    assert [(p.line, p.reason) for p in found.problems] == [
        (2, "malformed_json"),
        (3, "schema"),
        (4, "schema"),
    ]
    assert "'pred' is not a string (null)" in str(found.problems[1])
    with pytest.raises(InputError, match="3 bad prediction line"):
        found.raise_problems()


def test_a_pred_is_used_as_the_evaluator_uses_it() -> None:
    assert evaluated_pred("SELECT 1;") == "SELECT 1"
    assert evaluated_pred("SELECT 1;;") == "SELECT 1;"  # one final ';' only
    assert evaluated_pred(f"  {NO_SQL}\n") is None
    assert evaluated_pred(f"```{NO_SQL}```") == f"```{NO_SQL}```"  # an answer, not abstaining
    assert evaluated_pred("") == "" and evaluated_pred(" ; ") == ""
