"""load_sources: formats, files and folders, and the project's own JSONL format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from curate.sources.load import FORMATS, load_sources, source_files
from curate.sources.records import FORMAT
from score.errors import InputError


def record(rid: str, **extra: object) -> str:
    obj = {
        "format": FORMAT,
        "id": rid,
        "question": f"question {rid}?",
        "gold_sql": "SELECT 1",
        "gold_dialect": "duckdb",
        **extra,
    }
    return json.dumps(obj)


def test_every_importer_has_a_loader_and_a_pattern() -> None:
    for module in FORMATS.values():
        assert callable(module.load_file) and module.PATTERN.startswith("*.")


def test_a_folder_is_read_recursively_in_sorted_order(tmp_path: Path) -> None:
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "two.jsonl").write_text(record("b1") + "\n")
    (tmp_path / "a.jsonl").write_text(record("a1") + "\n" + record("a2") + "\n")
    (tmp_path / "notes.txt").write_text("not a source file")
    assert [name for _, name in source_files(tmp_path, "jsonl")] == ["a.jsonl", "b/two.jsonl"]
    records, problems = load_sources(tmp_path, "jsonl")
    assert problems == [] and [r.id for r in records] == ["a1", "a2", "b1"]


def test_an_id_repeated_across_files_is_a_problem(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(record("x") + "\n")
    (tmp_path / "b.jsonl").write_text(record("y") + "\n" + record("x") + "\n")
    records, problems = load_sources(tmp_path, "jsonl")
    assert [r.id for r in records] == ["x", "y"]
    (p,) = problems
    assert (p.reason, p.task_id, p.path) == ("duplicate_id", "x", str(tmp_path / "b.jsonl"))
    assert "first in a.jsonl" in str(p)


def test_jsonl_problems_keep_their_lines(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(record("a") + "\nnot json\n" + record("b", gold_dialect="mysql") + "\n")
    records, problems = load_sources(path, "jsonl")
    assert [r.id for r in records] == ["a"]
    assert [(p.reason, p.line) for p in problems] == [("malformed_json", 2), ("schema", 3)]
    assert problems[1].json_path == "$.gold_dialect" and problems[1].task_id == "b"


def test_an_empty_folder_is_a_problem_not_an_error(tmp_path: Path) -> None:
    records, problems = load_sources(tmp_path, "querylibrary")
    assert records == [] and [p.reason for p in problems] == ["no_files"]


def test_unknown_format_and_missing_path_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown source format 'csv'"):
        load_sources(tmp_path, "csv")
    with pytest.raises(InputError, match="no such file or folder"):
        load_sources(tmp_path / "nope", "jsonl")
