"""sqlgold verify on what is not a plain pair: a gold alone, an unanswerable record, paths
that are not SQL files, text that is not UTF-8, and parse errors with their position."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curate.cli import main
from score.cli.exit_codes import FOUND_DIFFERENT


def run(omop_db, *args):
    return CliRunner().invoke(main, ["verify", "--db", str(omop_db), *args])


def record(**fields) -> dict:
    return {"format": "sqlgold.source/1", "question": "How many?", **fields}


def test_a_record_without_an_answer_checks_its_gold_alone(omop_db, tmp_path):
    """The issue: it said the record 'has no gold and answer'."""
    source = tmp_path / "s.jsonl"
    lines = [
        record(id="g1", gold_sql="SELECT COUNT(*) AS n FROM cdm.person", gold_dialect="tsql"),
        record(id="g2", gold_sql="SELECT 1 AS n WHERE 1 = 0", gold_dialect="duckdb"),
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = run(omop_db, "--id", "g1", "--source", str(source))
    assert result.exit_code == 0, result.output
    assert "1130" in result.output and "no reference answer to compare it with" in result.output
    empty = run(omop_db, "--id", "g2", "--source", str(source))
    assert empty.exit_code == FOUND_DIFFERENT
    assert "the gold is empty" in empty.output
    alone = run(omop_db, "--gold", "SELECT COUNT(*) AS n FROM cdm.death")
    assert alone.exit_code == 0, alone.output


def test_an_unanswerable_records_claims_are_checked(omop_db, tmp_path):
    source = tmp_path / "u.jsonl"
    lines = [
        record(id="u1", answerable=False, unanswerable_because={"empty_tables": ["note"]}),
        record(id="u2", answerable=False, unanswerable_because={"empty_tables": ["person"]}),
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    holds = run(omop_db, "--id", "u1", "--source", str(source))
    assert holds.exit_code == 0, holds.output
    assert "cdm.note is empty" in holds.output and "every claim holds" in holds.output
    fails = run(omop_db, "--id", "u2", "--source", str(source))
    assert fails.exit_code == FOUND_DIFFERENT
    assert "a claim does not hold: cdm.person has 1130 rows, not 0" in fails.output


def test_a_path_that_is_not_a_sql_file_is_an_error_not_sql(omop_db, tmp_path):
    """The issue: `--gold missing.sql` ran the path as SQL ("Required keyword: 'this'
    missing"), and a folder too."""
    missing = run(omop_db, "--gold", "missing.sql", "--answer", "SELECT 1")
    assert missing.exit_code == 1
    no_file = "no such file (and one word is not a query)"
    assert missing.output == f"error: [verify] missing.sql: --gold: {no_file}\n"
    nested = run(omop_db, "--gold", "SELECT 1", "--answer", str(tmp_path / "q" / "a.sql"))
    assert nested.exit_code == 1 and "--answer: no such file" in nested.output
    folder = run(omop_db, "--gold", str(tmp_path), "--answer", "SELECT 1")
    assert folder.exit_code == 1
    assert folder.output == f"error: [verify] {tmp_path}: --gold: a folder, not a SQL file\n"


def test_a_mistyped_file_name_is_a_missing_file_not_a_query(omop_db):
    """The issue: `--gold gold_query` (no such file) was read as SQL: "a gold query is one
    SELECT, not COLUMN"."""
    typo = run(omop_db, "--gold", "gold_query")
    assert typo.exit_code == 1
    assert (
        typo.output
        == "error: [verify] gold_query: --gold: no such file (and one word is not a query)\n"
    )


def test_a_half_typed_query_says_which_clause_is_incomplete(omop_db):
    """The issue: "Required keyword: 'expression' missing for <class
    'sqlglot.expressions.query.Limit'>"."""
    half = run(omop_db, "--gold", "SELECT person_id FROM person LIMIT")
    assert half.exit_code == FOUND_DIFFERENT
    assert "LIMIT is incomplete: its expression is missing (line 1, column 30:" in half.output
    assert "sqlglot.expressions" not in half.output


def test_a_file_that_is_not_utf8_is_one_line_naming_it(omop_db, tmp_path):
    gold = tmp_path / "gold.sql"
    gold.write_bytes(b"SELECT 1 AS n\n-- caf\xe9\n")
    result = run(omop_db, "--gold", str(gold), "--answer", "SELECT 1 AS n")
    assert result.exit_code == 1
    assert result.output == f"error: [verify] {gold}:2: --gold: not UTF-8 text (byte 0xe9)\n"


def test_parse_errors_say_where(omop_db):
    """The issue: verify's parse errors had no position."""
    tsql = run(omop_db, "--gold", "SELECT 1,\n (2 FROM cdm.person", "--answer", "SELECT 1")
    assert tsql.exit_code == FOUND_DIFFERENT
    assert 'Expecting ) (line 2, column 5: " (2 FROM cdm.person")' in tsql.output
    duck = run(
        omop_db,
        "--gold",
        "SELECT 1",
        "--answer",
        "SELECT count(*)\nFROM cdm.person WHERE WHERE",
    )
    assert duck.exit_code == FOUND_DIFFERENT
    assert "(line 2, column" in duck.output and "FROM cdm.person WHERE WHERE" in duck.output


# -- the installed script: what `sqlgold verify` does as a process of its own ----------

#: The installed ``sqlgold`` script's own code (pyproject's entry point).
SCRIPT = "import sys; from curate.cli import run; sys.argv[0] = 'sqlgold'; run()"
#: A pair with 1,000 rows each (the most a gold may have), shown in full: far more output
#: than a pipe holds.
MANY_ROWS = "SELECT person_id, year_of_birth FROM cdm.person ORDER BY person_id LIMIT 1000"


def _script(*args: str, env: dict | None = None):
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", SCRIPT, *args], capture_output=True, text=True, timeout=120, env=env
    )


def test_the_script_leaves_no_temporary_folder_behind(omop_db, tmp_path):
    """The issue: each `sqlgold verify` left a $TMPDIR/pymp-* folder (the fork server's
    socket), since it ends without Python's teardown."""
    import os

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    done = _script("verify", "--db", str(omop_db), "--gold", "SELECT COUNT(*) AS n FROM person",
                   env={**os.environ, "TMPDIR": str(tmp)})  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert list(tmp.iterdir()) == []


def test_the_script_ends_verify_at_once_with_all_its_output_and_its_exit_code(omop_db):
    """`verify` skips Python's teardown once its executor is closed (curate.cli.quick_exit):
    everything it printed still arrives, and the exit code is the verdict's."""
    for answer, code in ((MANY_ROWS, 0), (MANY_ROWS.replace("year_of_birth", "-year_of_birth"), 3)):
        args = ["verify", "--db", str(omop_db), "--gold-dialect", "duckdb", "--rows", "2000",
                "--gold", MANY_ROWS, "--answer", answer]  # fmt: skip
        alone = _script(*args)
        in_process = CliRunner().invoke(main, args)
        assert (alone.returncode, in_process.exit_code) == (code, code), alone.stderr
        assert len(alone.stdout) > 65536
        assert _untimed(alone.stdout) == _untimed(in_process.output)


def _untimed(text: str) -> str:
    """The output without its timings, and without the padding a timing's width moves
    (a column right of one shifts when it gains a digit)."""
    import re

    return re.sub(r" +", " ", re.sub(r"[\d.]+ ms", "- ms", text))


def test_the_script_exits_as_python_does_where_verify_did_not_finish(omop_db, tmp_path):
    usage = _script("verify", "--db", str(omop_db))
    assert usage.returncode == 2 and "give --gold" in usage.stderr
    missing = _script("verify", "--db", str(tmp_path / "none.duckdb"), "--gold", "SELECT 1")
    assert missing.returncode == 1 and "no database file" in missing.stderr


def test_quick_exit_does_nothing_unless_allowed_and_given_a_number(monkeypatch):
    from curate.cli import quick_exit

    ended = []
    monkeypatch.setattr(quick_exit.os, "_exit", ended.append)
    # the process goes on: its multiprocessing folder (the fork server's socket) stays
    monkeypatch.setattr(quick_exit, "_remove_multiprocessing_folder", lambda: None)
    monkeypatch.setattr(quick_exit, "_allowed", False)
    quick_exit.end(0)
    assert ended == []
    quick_exit.allow()
    quick_exit.end("a message, which Python prints")
    assert ended == []
    quick_exit.end(None)
    quick_exit.end(3)
    assert ended == [0, 3]


def test_a_gold_checked_alone_meets_the_reference_rules_as_with_an_answer(omop_db):
    """The issue: `verify --gold` alone exited 0 on a gold reading the current date, all
    zero, or TOP without ORDER BY, where the same gold beside an answer exited 3."""
    for gold, rule in (
        ("SELECT COUNT(*) AS n FROM person WHERE birth_datetime < GETDATE()", "no_current_date"),
        ("SELECT COUNT(*) AS n FROM person WHERE person_id < 0", "not_all_zero_or_null"),
        ("SELECT TOP 1 person_id FROM person", "limit_needs_order"),
    ):
        alone = run(omop_db, "--gold", gold)
        assert alone.exit_code == FOUND_DIFFERENT, (gold, alone.output)
        assert f"reference rule: FAILS verify/{rule}" in alone.output
        paired = run(omop_db, "--gold", gold, "--answer", "SELECT 1 AS n")
        assert paired.exit_code == FOUND_DIFFERENT and f"verify/{rule}" in paired.output
    fine = run(omop_db, "--gold", "SELECT COUNT(*) AS n FROM person")
    assert fine.exit_code == 0 and "reference rules: the gold meets every one" in fine.output


def test_a_limit_on_a_one_row_aggregate_needs_no_order(omop_db):
    """The issue: exit 3 beside SAME RESULT for `TOP 1 COUNT(*)`: no order can matter."""
    result = run(
        omop_db,
        "--gold",
        "SELECT TOP 1 COUNT(*) AS n FROM person",
        "--answer",
        "SELECT COUNT(*) AS n FROM cdm.person LIMIT 1",
    )
    assert result.exit_code == 0, result.output
    assert "SAME RESULT" in result.output and "FAILS" not in result.output


def test_side_by_side_tables_end_on_one_line(omop_db):
    """The issue: the shorter side's "N row(s)" footer was printed on the other side's
    data row."""
    result = run(
        omop_db,
        "--gold",
        "SELECT gender_concept_id, COUNT(*) AS n FROM person GROUP BY 1 ORDER BY 1",
        "--answer",
        "SELECT COUNT(*) AS n FROM cdm.person",
    )
    footers = [line for line in result.output.splitlines() if "row(s)," in line]
    assert len(footers) == 1 and footers[0].count("row(s),") == 2, result.output


def test_verify_on_postgresql_checks_duckdb_sql_and_runs_its_translation(pg_cdm):
    """The issue: `verify --db postgresql://...` sent DuckDB SQL to PostgreSQL unchanged
    (`type "double" does not exist`), and an answer written for PostgreSQL was made DuckDB
    SQL first; the output said "as run on DuckDB"."""
    db = ["verify", "--db", pg_cdm.reader_url]
    source = "data/benchmark/omop_source.jsonl"
    from tests.paths import REPO

    record_check = CliRunner().invoke(
        main, [*db, "--id", "omop-042", "--source", str(REPO / source)]
    )
    assert record_check.exit_code == 0, record_check.output
    assert "gold as run on PostgreSQL:" in record_check.output
    assert "SAME RESULT" in record_check.output
    written = CliRunner().invoke(
        main,
        [*db, "--gold", "SELECT COUNT(*) AS n FROM person",
         "--answer", "SELECT count(*)::int AS n FROM person", "--answer-dialect", "postgres"],
    )  # fmt: skip
    assert written.exit_code == 0, written.output
    assert "answer (postgres, as written on PostgreSQL)" in written.output
    assert "SAME RESULT" in written.output
