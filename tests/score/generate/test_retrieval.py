"""Retrieval: grounding chunks and train examples, BM25, and no held-out answer ever."""

from __future__ import annotations

import shutil

import pytest

from score.generate.errors import GenerationError
from score.generate.retrieval import (
    MAX_CHUNK_CHARS,
    Index,
    build_index,
    document_chunks,
    example_chunks,
    grounding_chunks,
    leaked_chunks,
)
from score.inputs.split import split_tasks
from score.inputs.task_set import instances

from .conftest import GROUNDING


def squash(sql: str) -> str:
    return " ".join(sql.split()).lower()


@pytest.fixture(scope="module")
def split(all_tasks):
    return split_tasks(all_tasks, test_fraction=0.5, seed=0)


@pytest.fixture(scope="module")
def index(split):
    return build_index(GROUNDING, split["train"], split["test"])


def test_the_index_holds_no_test_tasks_gold_or_answer(index, split):
    assert split["test"] and split["train"]
    texts = [squash(c.text) for c in index.chunks]
    test_ids = {t["id"] for t in split["test"]}
    assert not [c.id for c in index.chunks if c.task_id in test_ids]
    for task in split["test"]:
        for sql in (task["gold_sql"], task["answer_sql"]):
            if sql:
                assert not any(squash(sql) in text for text in texts), task["id"]
    # the train side's answerable tasks are all there, as examples
    train_examples = {t["id"] for t in split["train"] if t["answerable"]}
    assert {c.task_id for c in index.chunks if c.task_id} == train_examples
    assert not any(c.id.startswith("examples.md") for c in index.chunks)


def test_no_test_question_retrieves_its_own_answer(index, split):
    for instance in instances(split["test"]):
        hits = index.search(instance.question, 5)
        assert len(hits) == 5
        shown = " ".join(squash(h.chunk.text) for h in hits)
        for sql in (instance.task["gold_sql"], instance.task["answer_sql"]):
            assert not sql or squash(sql) not in shown


def test_a_train_question_never_retrieves_its_own_example(index, split):
    task = next(t for t in split["train"] if t["answerable"])
    assert index.search(task["question"], 1)[0].chunk.task_id == task["id"]  # it would
    hits = index.search(task["question"], 5, exclude_task=task["id"])
    assert task["id"] not in {h.chunk.task_id for h in hits}


def test_an_index_that_would_show_a_held_out_answer_is_refused(tmp_path, split):
    folder = tmp_path / "grounding"
    shutil.copytree(GROUNDING, folder)
    task = next(t for t in split["test"] if t["answerable"])
    with (folder / "vocabulary.md").open("a", encoding="utf-8") as f:
        f.write(f"\n## A leaked answer\n\n```sql\n{task['gold_sql']}\n```\n")
    with pytest.raises(GenerationError, match=f"vocabulary.md#a-leaked-answer shows {task['id']}"):
        build_index(folder, split["train"], split["test"])
    # an example of a held-out task is refused too, wherever it comes from
    leaks = leaked_chunks(example_chunks([task]), [task])
    assert leaks == [(f"example:{task['id']}", task["id"])]


def test_search_is_deterministic_and_ranked(index):
    question = "How many persons have a condition_occurrence of Type 2 diabetes mellitus?"
    first, second = index.search(question, 5), index.search(question, 5)
    assert [h.chunk.id for h in first] == [h.chunk.id for h in second]
    assert [h.score for h in first] == sorted((h.score for h in first), reverse=True)
    assert index.search("zzzz qqqq", 5) == []  # nothing shares a word with it


def test_grounding_documents_are_cut_at_their_sections():
    chunks = grounding_chunks(GROUNDING)
    ids = [c.id for c in chunks]
    assert len(ids) == len(set(ids))
    person = next(c for c in chunks if c.id.startswith("omop_schema.md#cdm-person-"))
    assert person.text.startswith("OMOP CDM schema of the benchmark database: cdm.person (")
    assert all(len(c.text) <= MAX_CHUNK_CHARS + 200 for c in chunks)
    long = "# T\n## Long\n" + "\n\n".join("word " * 100 for _ in range(20))
    pieces = document_chunks("t.md", long)
    assert [c.id for c in pieces][:2] == ["t.md#long", "t.md#long-2"] and len(pieces) > 2


def test_an_empty_index_or_missing_folder_is_an_error(tmp_path):
    with pytest.raises(GenerationError, match="no grounding folder"):
        grounding_chunks(tmp_path / "missing")
    with pytest.raises(GenerationError, match="no chunks"):
        Index([])
