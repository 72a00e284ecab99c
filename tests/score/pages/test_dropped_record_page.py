"""The curation page's dropped record as a curator opens it to fix the record (issue 57,
finding 9): its gold as written and as DuckDB SQL, its reference answer, both results'
values, and the ``sqlgold verify`` command that reproduces the drop, which runs."""

from __future__ import annotations

import shlex

from tests.cli_run import sqlgold, write_jsonl
from tests.score.pages.browser_page import open_page

RECORDS = [
    {"format": "sqlgold.source/1", "id": "off-by-one", "question": "How many persons?",
     "gold_sql": "SELECT TOP 5 COUNT(*) AS n FROM cdm.person", "gold_dialect": "tsql",
     "answer_sql": "SELECT count(*) - 1 AS n FROM cdm.person", "answer_dialect": "duckdb"},
    {"format": "sqlgold.source/1", "id": "kept", "question": "How many deaths?",
     "gold_sql": "SELECT COUNT(*) AS n FROM cdm.death", "gold_dialect": "tsql"},
]  # fmt: skip


def test_a_dropped_record_shows_what_fixing_it_needs(browser, omop_db, tmp_path) -> None:
    source = write_jsonl(tmp_path / "mine_source.jsonl", RECORDS)
    done = sqlgold("curate", source.name, "--db", omop_db, "-q", "--today", "2024-01-02",
                   "--out", "mine_tasks.jsonl",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    opened = open_page(browser, tmp_path / "mine_report.html", "off-by-one")
    text = opened.page.inner_text("#detail")
    assert opened.errors == []
    assert "the reference answer differs" in text
    assert "SOURCE SQL (TSQL)" in text.upper() and "SELECT TOP 5" in text  # as written
    assert "DUCKDB SQL (THE GOLD)" in text.upper() and "LIMIT 5" in text  # as checked
    assert "REFERENCE ANSWER (DUCKDB)" in text.upper() and "count(*) - 1" in text
    assert "1129" in text and "1130" in text  # both results' values
    command = next(line for line in text.splitlines() if line.startswith("sqlgold verify"))
    assert "--id off-by-one" in command and "--today 2024-01-02" in command
    again = sqlgold(*shlex.split(command)[1:], cwd=tmp_path)  # the command, as printed
    assert again.returncode == 3, again.stderr  # found different, as curation found
    assert "DIFFERENT" in again.stdout and "1129" in again.stdout
    kept = open_page(browser, tmp_path / "mine_report.html", "kept").page.inner_text("#detail")
    assert "sqlgold verify" not in kept
