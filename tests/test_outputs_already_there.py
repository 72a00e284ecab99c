"""One rule for an output already there (issue 57, finding 8; docs/commands.md): what a
command made before is replaced, saying so; a scoring run is continued or refused; and
nothing sqlgold did not write is written over or into.  Each command runs as a process."""

from __future__ import annotations

import json

from tests.cli_run import one_line_error, sqlgold, write_jsonl
from tests.task_factory import make_task, write_task_file

SOURCE = {
    "format": "sqlgold.source/1",
    "id": "s1",
    "question": "How many persons?",
    "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
    "gold_dialect": "tsql",
    "answer_sql": "SELECT count(*) AS n FROM cdm.person",
    "answer_dialect": "duckdb",
}


def _foreign(path, text="mine, not sqlgold's\n"):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_curate_replaces_its_own_task_file_and_refuses_anything_else(omop_db, tmp_path):
    source = write_jsonl(tmp_path / "s.jsonl", [SOURCE])
    out = tmp_path / "out" / "tasks.jsonl"
    first = sqlgold("curate", source, "--db", omop_db, "--out", out, "-q")
    assert first.returncode == 0, first.stderr
    assert "replaced" not in first.stdout
    again = sqlgold("curate", source, "--db", omop_db, "--out", out, "-q")
    assert again.returncode == 0, again.stderr
    assert "(replaced the task file an earlier curate wrote)" in again.stdout
    notes = _foreign(tmp_path / "notes.jsonl", '{"id": "not a task file"}\n')
    refused = sqlgold("curate", source, "--db", omop_db, "--out", notes, "-q")
    one_line_error(refused, f"[curate] {notes}: is not a task file: sqlgold replaces only")
    assert notes.read_text() == '{"id": "not a task file"}\n'
    assert not (tmp_path / "notes_report.json").exists()  # nothing written beside it
    page = _foreign(tmp_path / "mine" / "r.html")
    refused = sqlgold("curate", source, "--db", omop_db, "--out", tmp_path / "mine" / "t.jsonl",
                      "--report", tmp_path / "mine" / "r.json", "-q")  # fmt: skip
    one_line_error(refused, f"{page}: is there without the curation report r.json")
    assert sorted(p.name for p in page.parent.iterdir()) == ["r.html"]


def test_score_commands_replace_their_own_outputs_and_refuse_folders_of_yours(omop_db, tmp_path):
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1"), make_task("t2")])
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"task_id": t, "language": "en", "sql": "SELECT count(*) AS n FROM cdm.person"}
         for t in ("t1", "t2")],
    )  # fmt: skip
    score = ["score", "run", tasks, preds, "--db", omop_db, "--split", "all", "-q"]
    for run in ("a", "b"):
        done = sqlgold(*score, "--out", tmp_path / run)
        assert done.returncode == 0, done.stderr
    again = sqlgold(*score, "--out", tmp_path / "a")  # a run is never replaced
    one_line_error(again, "the folder already holds a run; pass --resume")
    mine = _foreign(tmp_path / "mine" / "notes.txt").parent
    for args in (
        [*score, "--out", mine],
        ["score", "report", tmp_path / "a", "--out", mine],
        ["score", "compare", tmp_path / "a", tmp_path / "b", "--out", mine],
    ):
        refused = sqlgold(*args)
        one_line_error(refused, f"{mine}: holds 'notes.txt', which is not part of")
        assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
    into_run = sqlgold("score", "compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "a")
    one_line_error(into_run, "which is not part of a comparison")
    compare = ["score", "compare", tmp_path / "a", tmp_path / "b", "--out", tmp_path / "ab"]
    first = sqlgold(*compare)
    assert first.returncode == 0 and "replaced" not in first.stdout, first.stderr
    second = sqlgold(*compare)
    assert second.returncode == 0, second.stderr
    assert "(replaced the comparison written there before)" in second.stdout
    lying = tmp_path / "lying"
    _foreign(lying / "comparison.json", json.dumps({"format": "not sqlgold's"}))
    refused = sqlgold("score", "compare", tmp_path / "a", tmp_path / "b", "--out", lying)
    one_line_error(refused, "holds no comparison.json sqlgold wrote")
    report = sqlgold("score", "report", tmp_path / "a")  # into the run's own folder
    assert report.returncode == 0, report.stderr


def test_suite_grounding_and_db_build_refuse_what_they_did_not_make(omop_db, tmp_path):
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1")])
    mine = _foreign(tmp_path / "mine" / "notes.txt").parent
    suite = sqlgold("suite", "build", tasks, "--db", omop_db, "--out", mine, "-q")
    one_line_error(suite, f"[suite] {mine}: holds no suite.json sqlgold wrote")
    grounding = sqlgold("grounding", "--db", omop_db, "--out", mine)
    one_line_error(grounding, f"[grounding] {mine}: holds 'notes.txt', which is not part of")
    database = _foreign(tmp_path / "mine.duckdb")
    built = sqlgold("db", "build", "--out", database, "-q")
    one_line_error(built, f"{database}: is not a database sqlgold db build made")
    assert database.read_text() == "mine, not sqlgold's\n"
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]
