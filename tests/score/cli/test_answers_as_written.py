"""Answers as models write them, scored by ``sqlgold score run`` in a process of its own:
a comment after the one statement, a query followed by its explanation, and each
instance's time its own (issue 57, findings 1 to 3)."""

from __future__ import annotations

from tests.cli_run import results, sqlgold, write_jsonl
from tests.task_factory import make_task, write_task_file

COUNT = "SELECT count(*) AS n FROM cdm.person"
#: slow to parse (a long IN list) and slow to run (a three-way join of person): the
#: instance whose time an earlier reply read late was credited with, and the other way
SLOW = (
    "SELECT count(*) AS n FROM cdm.person a, cdm.person b, cdm.person c "
    "WHERE a.person_id + b.person_id < c.person_id + 1000000 AND a.person_id NOT IN ("
    + ",".join(str(-i) for i in range(1, 6000))
    + ")"
)

ANSWERS = {
    "comment": {"output": f"{COUNT}; -- the persons"},
    "block_comment": {"sql": f"{COUNT};\n/* every person */\n;\n"},
    "fenced_comment": {"output": f"```sql\n{COUNT};\n-- note\n```"},
    "prose": {"output": f"{COUNT}\n\nThis query counts every person in the CDM."},
    "prose_after_semicolon": {"output": f"Here it is:\n{COUNT};\nNote: person holds one row each."},
    "two_statements": {"output": f"{COUNT}; DROP VIEW cdm.person"},
    "hidden_second": {"output": f"{COUNT}; -- note\nDROP VIEW cdm.person"},
    "slow": {"sql": SLOW},
    **{f"fast{i}": {"sql": COUNT} for i in range(8)},
}


def test_answers_as_written_and_each_instance_timed_on_its_own(omop_db, tmp_path):
    """Finding 1: ``SELECT ...; -- note`` was a build_error ("2 statements"); a comment,
    whitespace or ``;`` after the one statement is none, and a second statement stays
    refused (also behind a comment).  Finding 3: prose after an unfenced query was taken
    into the SQL (parse_error); it is cut, and results.jsonl says which rule took the SQL.
    Finding 2: a reply read late credited one instance with another's time (total_s
    below its own execute_s); each instance's total_s now holds its own run."""
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task(t) for t in ANSWERS])
    preds = write_jsonl(
        tmp_path / "preds.jsonl",
        [{"task_id": t, "language": "en", **answer} for t, answer in ANSWERS.items()],
    )
    out = tmp_path / "run"
    done = sqlgold("score", "run", tasks, preds, "--db", omop_db, "--out", out,
                   "--split", "all", "--no-cache", "-q")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    found = results(out)
    for task in ("comment", "block_comment", "fenced_comment", "prose", "prose_after_semicolon"):
        assert found[task]["outcome"] == "correct", found[task]
    assert found["comment"]["sql"] == f"{COUNT}; -- the persons"  # runs as written
    assert found["prose"]["sql"] == COUNT
    assert found["prose"]["extracted_by"] == (
        "the text from the first SELECT/WITH line to the prose after it"
    )
    assert found["prose_after_semicolon"]["sql"] == f"{COUNT};"
    assert found["comment"]["extracted_by"].endswith("to the end")
    assert found["fenced_comment"]["extracted_by"] == "the last ```sql block"
    assert "extracted_by" not in found["block_comment"]  # given as SQL: nothing extracted
    for task in ("two_statements", "hidden_second"):
        assert found[task]["outcome"] == "build_error", found[task]
        assert "2 statements" in found[task]["reason"]
    for record in found.values():
        timings = record["timings"]
        if "execute_s" in timings:  # its total holds its own run and comparison
            assert timings["total_s"] >= timings["execute_s"] + timings["compare_s"], record
