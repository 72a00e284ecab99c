"""What sqlgold says, in words a user reads (issue 57, findings 10 and 11): no sqlglot
``Token(...)`` or class path in a reason, articles right, the real reason getenv is
refused, drop rules with an example, breakdowns in their natural order, and --help that
names every choice.  Each command runs as a process."""

from __future__ import annotations

import re

from tests.cli_run import results, sqlgold, write_jsonl
from tests.task_factory import make_task, write_task_file

ANSWERS = {
    "attach": "ATTACH 'x.duckdb' AS y",
    "insert": "INSERT INTO cdm.person VALUES (1)",
    "getenv": "SELECT getenv('HOME') AS n",
    "unfinished": "SELECT count(*) AS n FROM",
    "unfinished_join": "SELECT count(*) AS n FROM cdm.person JOIN",
}
INTERNALS = re.compile(r"<Token|Token\(|TokenType\.|<class |sqlglot\.expressions")


def test_reasons_are_words_not_internals(omop_db, tmp_path):
    tasks = [make_task(t) for t in ANSWERS]
    for task, level in zip(tasks, ["hard", "easy", "medium", "hard", "easy"], strict=True):
        task["difficulty"] = level
    tasks_file = write_task_file(tmp_path / "tasks.jsonl", tasks)
    lines = [{"task_id": t, "language": "en", "sql": sql} for t, sql in ANSWERS.items()]
    preds = write_jsonl(tmp_path / "p.jsonl", lines)
    done = sqlgold("score", "run", tasks_file, preds, "--db", omop_db, "--out", tmp_path / "run",
                   "--split", "all", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = results(tmp_path / "run")
    assert found["attach"]["reason"].startswith("an ATTACH statement")
    assert found["insert"]["reason"].startswith("an INSERT statement")
    assert "reads the query process's environment" in found["getenv"]["reason"]
    verify = sqlgold("verify", "--db", omop_db, "--gold", ANSWERS["unfinished_join"])
    assert verify.returncode == 3  # sqlglot's own message, on a SQL Server gold it reads
    assert "Expected table name but got the end of the query" in verify.stdout
    assert not INTERNALS.search(verify.stdout), verify.stdout
    for record in found.values():
        assert not INTERNALS.search(record["reason"]), record["reason"]
    report = sqlgold("score", "report", tmp_path / "run")
    assert report.returncode == 0, report.stderr
    text = (tmp_path / "run" / "report.md").read_text()
    by_difficulty = text.split("## By difficulty")[1].split("##")[0]
    rows = [row.split("|") for row in by_difficulty.splitlines()[4:] if row]
    levels = [row[1].strip() for row in rows if row[2].strip() == "p"]
    assert levels == ["easy", "medium", "hard"], by_difficulty  # not alphabetical


def test_compare_page_names_scores_as_the_report_does(omop_db, tmp_path):
    tasks_file = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1"), make_task("t2")])
    for run, sql in (("a", "SELECT 1130 AS n"), ("b", "SELECT 1 AS n")):
        lines = [{"task_id": t, "language": "en", "sql": sql} for t in ("t1", "t2")]
        preds = write_jsonl(tmp_path / f"{run}.jsonl", lines)
        done = sqlgold("score", "run", tasks_file, preds, "--db", omop_db, "--out", tmp_path / run,
                       "--split", "all", "-q")  # fmt: skip
        assert done.returncode == 0, done.stderr
    done = sqlgold("score", "compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "ab")
    assert done.returncode == 0, done.stderr
    summary = (tmp_path / "ab" / "report.html").read_text().split('<script id="data"')[0]
    for label in ("<td>EX</td>", "<td>RS(5)</td>", "<td>Cut off</td>", "<td>LF accuracy</td>"):
        assert label in summary
    assert "<td>rs 5</td>" not in summary and "cut_off_rate" not in summary


def test_curate_says_what_each_drop_rule_means_and_help_names_every_choice(omop_db, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", [
        {"format": "sqlgold.source/1", "id": "empty", "question": "None?", "gold_dialect": "tsql",
         "gold_sql": "SELECT person_id FROM cdm.person WHERE 1 = 0"},
        {"format": "sqlgold.source/1", "id": "ok", "question": "All?", "gold_dialect": "tsql",
         "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person"},
    ])  # fmt: skip
    done = sqlgold("curate", source, "--db", omop_db, "--out", tmp_path / "t.jsonl", "-q")
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if "verify/min_rows" in x]
    assert "e.g. empty: the result is empty" in line
    assert "text2omop" in sqlgold("curate", "--help").stdout
    assert "report.html" in sqlgold("score", "run", "--help").stdout
