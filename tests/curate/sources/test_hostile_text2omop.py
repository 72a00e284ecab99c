"""TEXT-TO-OMOP's item and result files as a hostile user writes them (issue 57): huge
lines, bytes that are not UTF-8, repeated items, fields of the wrong type.  Each ends in
what the docs say, with no traceback: a line's problem is that line's (the rest is
read), a line over the bound is one error naming the file and the line."""

from __future__ import annotations

import json

from tests.cli_run import one_line_error, sqlgold

GOOD = {"input": "How many persons?", "output": "SELECT COUNT(*) FROM person;"}
NO_SQL = {"input": "Phone of patient 7?", "output": "<NO_SQL>"}
HUGE = "x" * (16 * 2**20 + 1)  # one byte over MAX_LINE_BYTES


def _lines(path, *lines) -> object:
    with path.open("wb") as f:
        for line in lines:
            f.write(line if isinstance(line, bytes) else (json.dumps(line) + "\n").encode())
    return path


def _curate(omop_db, source, out):
    return sqlgold("curate", source, "--format", "text2omop", "--db", omop_db, "--out", out,
                   "--min-rows", "0", "--allow-all-zero", "-q")  # fmt: skip


def test_hostile_item_files(omop_db, tmp_path):
    items = _lines(
        tmp_path / "test.jsonl",
        GOOD, NO_SQL, GOOD,  # a repeated item gets its own id
        {"input": 5, "output": None}, {"input": "no gold"}, [1, 2],
        b'{"input": "caf\xe9?", "output": "SELECT 1;"}\n',  # not UTF-8: that line only
    )  # fmt: skip
    done = _curate(omop_db, items, tmp_path / "t" / "tasks.jsonl")
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "t" / "tasks_report.json").read_text())
    assert [r["id"][-2:] for r in report["records"]].count("-2") == 1
    problems = {p["line"]: p["message"] for p in report["problems"]}
    assert problems == {
        4: "'input' is not a string (int)",
        5: "no field 'output'",
        6: "not a JSON object",
        7: "not UTF-8 text (byte 0xe9 at column 15)",
    }
    huge = _lines(tmp_path / "huge.jsonl", GOOD, {"input": HUGE, "output": "SELECT 1;"})
    refused = _curate(omop_db, huge, tmp_path / "h" / "tasks.jsonl")
    one_line_error(refused, f"[import] {huge}:2: line 2 is longer than 16 MiB")
    assert not (tmp_path / "h").exists()


def test_hostile_result_files(omop_db, tmp_path):
    items = _lines(tmp_path / "test.jsonl", GOOD, GOOD, NO_SQL)
    assert _curate(omop_db, items, tmp_path / "tasks.jsonl").returncode == 0
    right = {"input": GOOD["input"], "gold": GOOD["output"], "pred": GOOD["output"]}
    none = {"input": NO_SQL["input"], "gold": "<NO_SQL>", "pred": "<NO_SQL>"}

    def score(name, *lines):
        path = _lines(tmp_path / f"{name}.jsonl", *lines)
        return sqlgold("score", "run", tmp_path / "tasks.jsonl", path, "--db", omop_db,
                       "--out", tmp_path / name, "--profile", "text2omop", "-q")  # fmt: skip

    repeated = score("repeated", right, right, right, none)  # one line more than the items
    assert repeated.returncode == 0, repeated.stderr
    assert "1 result line(s) answer no task of this task set" in repeated.stderr
    assert "EX           1.000" in repeated.stdout
    typed = score("typed", right, {**right, "pred": None}, {"input": 5, "gold": "x", "pred": "y"})
    one_line_error(typed, "2 bad prediction line(s): line 2: 'pred' is not a string (null); "
                   "line 3: 'input' is not a string (int)")  # fmt: skip
    raw = b'{"input": "How many persons?", "gold": "SELECT 1;", "pred": "SELECT \xff"}\n'
    one_line_error(score("bytes", right, raw), "line 2: not UTF-8 text (byte 0xff")
    huge = score("huge", right, {**right, "pred": f"SELECT '{HUGE}'"})
    one_line_error(huge, "huge.jsonl:2: line 2 is longer than 16 MiB")
    for name in ("typed", "bytes", "huge"):
        assert not (tmp_path / name).exists()  # nothing half-written
