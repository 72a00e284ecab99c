"""A JSONL record whose string holds a character Python's ``splitlines`` breaks on
(U+2028, U+2029, U+0085, U+000B ...) is one line (issue 57, finding 14: `curate` read
a one-line file as three unreadable lines)."""

from __future__ import annotations

import json

from tests.cli_run import sqlgold

BREAKS = ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c"]


def _record(record_id: str, question: str) -> dict:
    return {
        "format": "sqlgold.source/1",
        "id": record_id,
        "question": question,
        "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
        "gold_dialect": "tsql",
        "answer_sql": "SELECT count(*) AS n FROM cdm.person",
        "answer_dialect": "duckdb",
    }


def test_curate_and_verify_read_a_line_whole_whatever_its_strings_hold(omop_db, tmp_path):
    source = tmp_path / "s.jsonl"
    lines = [_record(f"r{i}", f"How many{c}persons?") for i, c in enumerate(BREAKS)]
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), "utf-8")
    out = tmp_path / "tasks.jsonl"
    done = sqlgold("curate", source, "--db", omop_db, "--out", out, "--strict", "-q")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"records      {len(BREAKS)}" in done.stdout and "unreadable" not in done.stdout
    tasks = [json.loads(x) for x in out.read_text("utf-8").split("\n")[1:] if x]
    assert [t["question"] for t in tasks] == [f"How many{c}persons?" for c in BREAKS]
    last = sqlgold("verify", "--db", omop_db, "--id", f"r{len(BREAKS) - 1}", "--source", source)
    assert last.returncode == 0, last.stderr  # found on its own line, not a later one


def test_the_funsql_importer_splits_on_newlines_only(omop_db, tmp_path):
    source = tmp_path / "train.jsonl"
    rows = [{"query": f"How many{c}persons?", "sql_query": "SELECT COUNT(*) AS n FROM person"}
            for c in BREAKS]  # fmt: skip
    source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    done = sqlgold("curate", source, "--format", "funsql", "--db", omop_db,
                   "--out", tmp_path / "tasks.jsonl", "-q")  # fmt: skip
    assert f"records      {len(BREAKS)}" in done.stdout, done.stdout + done.stderr
    assert "unreadable" not in done.stdout
