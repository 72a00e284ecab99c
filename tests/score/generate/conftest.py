"""Fixtures of the generation tests: the scripted chat server and task sets."""

from __future__ import annotations

import pytest

from score.inputs.task_file import task_file_text
from score.inputs.task_set import load_tasks
from tests.paths import REPO

from .chat_server import ChatServer, Reply

pytest.importorskip("openai", reason="the generate extra is not installed (make test installs it)")
pytest.importorskip("bm25s", reason="the generate extra is not installed (make test installs it)")

TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
GROUNDING = REPO / "data" / "grounding"


def reference_reply(task: dict) -> Reply:
    """The task's reference answer as a model would give it."""
    if not task["answerable"]:
        return Reply("The tables this needs are empty.\n```\nABSTAIN\n```")
    return Reply(f"```sql\n{task['gold_sql']}\n```")


@pytest.fixture(scope="session")
def all_tasks() -> list[dict]:
    return load_tasks(TASKS)


@pytest.fixture(scope="session")
def answers_by_question(all_tasks) -> dict[str, Reply]:
    """Every question (each language) -> its task's reference answer."""
    return {
        " ".join(q.split()): reference_reply(t) for t in all_tasks for q in t["questions"].values()
    }


@pytest.fixture
def chat_server(answers_by_question):
    """A scripted server whose default is the reference answer of the question asked."""
    server = ChatServer(default=lambda q: answers_by_question[q]).start()
    yield server
    server.stop()


def write_tasks(path, tasks) -> str:
    """A task file as ``sqlgold curate`` writes it (its header holds the set hash)."""
    path.write_text(task_file_text(list(tasks)), encoding="utf-8")
    return str(path)
