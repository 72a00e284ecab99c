"""A generation run's journal read back on --resume: line by line under the bound on a
line, a torn last line cut off, any other bad line refused with its number."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from score.defaults import MAX_LINE_BYTES
from score.generate.errors import GenerationError
from score.generate.journal import PredictionFiles, dumps_line, journal_path, run_path
from score.inputs.jsonl import LineTooLong

META = {"run": "r", "model": "m"}


def _interrupted(tmp_path: Path, journal: bytes) -> Path:
    out = tmp_path / "preds.jsonl"
    run_path(out).write_text(json.dumps({"format": "sqlgold.generation/1", **META}))
    journal_path(out).write_bytes(journal)
    return out


def _line(task_id: str) -> bytes:
    return dumps_line({"task_id": task_id, "language": "en", "output": "SELECT 1"}).encode()


def test_a_torn_last_line_is_cut_off(tmp_path):
    out = _interrupted(tmp_path, _line("a") + _line("b") + b'{"task_id": "c", "lang')
    files = PredictionFiles(out, META, resume=True)
    files.close()
    assert sorted(files.records) == [("a", "en"), ("b", "en")]
    assert journal_path(out).read_bytes() == _line("a") + _line("b")


def test_a_bad_line_before_others_is_refused_with_its_number(tmp_path):
    out = _interrupted(tmp_path, _line("a") + b"not json\n" + _line("b"))
    with pytest.raises(GenerationError) as e:
        PredictionFiles(out, META, resume=True)
    assert e.value.line == 2 and "not a prediction line" in str(e.value)


def test_a_line_over_the_bound_is_refused_before_it_is_read_whole(tmp_path):
    out = _interrupted(tmp_path, _line("a"))
    with journal_path(out).open("ab") as f:  # a sparse line of NUL bytes past the bound
        f.truncate(len(_line("a")) + MAX_LINE_BYTES + 10)
    with pytest.raises(LineTooLong) as e:
        PredictionFiles(out, META, resume=True)
    assert ":2:" in str(e.value) and "generate" in str(e.value)
