"""Gold smells: each rule on a hand-made positive and negative case, curated on the real
database through the pipeline, with its switch, its action (drop or warn) and its
entry in the report and on the review page."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from curate.pipeline import CurationOptions, curate_record, curation_context
from curate.sources.records import SourceRecord
from curate.verify.shuffled_copy import SEED, shuffle_database
from curate.verify.smells import SMELLS, SmellRules

ALL_ON = SmellRules.switched(on=("float_order", "shuffled_copy"))


def record(question: str, gold: str) -> SourceRecord:
    return SourceRecord(id="r1", question=question, gold_sql=gold, gold_dialect="duckdb")


def curate(executor, question: str, gold: str, smells: SmellRules = ALL_ON):
    with curation_context(executor, CurationOptions(smells=smells, gold_cache=None)) as ctx:
        return curate_record(record(question, gold), ctx)[1]


def rules_of(verdict) -> list[str]:
    return [s["rule"] for s in verdict.smells]


# (rule, question, gold that smells, gold that does not)
CASES = [
    (
        "duplicate_rows",
        "List the years of birth of the persons born before 1930.",
        "SELECT year_of_birth FROM cdm.person WHERE year_of_birth < 1930",
        "SELECT DISTINCT year_of_birth FROM cdm.person WHERE year_of_birth < 1930",
    ),
    (
        "numbers_as_text",
        "How many persons are there?",
        "SELECT CAST(count(*) AS VARCHAR) AS persons FROM cdm.person",
        "SELECT count(*) AS persons FROM cdm.person",
    ),
    (
        "sort_direction",
        "Which three years of birth have the most persons?",
        "SELECT year_of_birth, count(*) AS n FROM cdm.person GROUP BY 1 ORDER BY n ASC, 1 LIMIT 3",
        "SELECT year_of_birth, count(*) AS n FROM cdm.person GROUP BY 1 ORDER BY n DESC, 1 LIMIT 3",
    ),
    (
        "float_order",
        "What is the sum of the measurement values divided by seven?",
        "SELECT sum(value_as_number / 7.0) AS s FROM cdm.measurement",
        "SELECT sum(value_as_number) AS s FROM cdm.measurement",
    ),
    (
        "shuffled_copy",
        "Which person is first in the person table?",
        "SELECT first(person_id) AS person_id FROM cdm.person",
        "SELECT min(person_id) AS person_id FROM cdm.person",
    ),
]


def test_every_smell_has_a_case() -> None:
    assert sorted(c[0] for c in CASES) == sorted(SMELLS)


@pytest.mark.parametrize(("rule", "question", "smelly", "clean"), CASES, ids=[c[0] for c in CASES])
def test_each_smell_is_found_in_its_positive_case_only(executor, rule, question, smelly, clean):
    found = curate(executor, question, smelly)
    if rule == "shuffled_copy":  # a result that depends on storage order drops
        assert found.status == "dropped" and found.rule == rule, found
        assert "stored in another order" in found.reason
    else:  # the others warn
        assert found.status == "kept" and rule in rules_of(found), found
    kept = curate(executor, question, clean)
    assert kept.status == "kept" and rule not in rules_of(kept), kept


@pytest.mark.parametrize(("rule", "question", "smelly", "clean"), CASES, ids=[c[0] for c in CASES])
def test_each_smell_has_its_own_switch(executor, rule, question, smelly, clean):
    on = tuple(r for r in ("float_order", "shuffled_copy") if r != rule)
    off = SmellRules.switched(on=on, off=(rule,))
    verdict = curate(executor, question, smelly, off)
    assert verdict.status == "kept" and rule not in rules_of(verdict), verdict


def test_the_rerun_smells_are_off_by_default(executor):
    assert SmellRules().enabled() == ("duplicate_rows", "numbers_as_text", "sort_direction")
    verdict = curate(executor, "Which person?", CASES[4][2], SmellRules())
    assert verdict.status == "kept"


def test_sort_words_read_by_the_kind_of_key() -> None:
    import sqlglot

    from curate.verify.smells import sort_direction

    by_birth = sqlglot.parse_one("SELECT person_id FROM p ORDER BY year_of_birth ASC LIMIT 1")
    by_age = sqlglot.parse_one("SELECT person_id, 2020 - y AS age FROM p ORDER BY age ASC LIMIT 1")
    assert sort_direction("Who is the oldest person?", by_birth) is None  # earliest birth
    assert sort_direction("Who is the oldest person?", by_age).rule == "sort_direction"
    latest = sqlglot.parse_one("SELECT visit_start_date FROM v ORDER BY visit_start_date LIMIT 1")
    assert sort_direction("When was the latest visit?", latest).rule == "sort_direction"
    assert sort_direction("List visits with at least 2 days, most recent first", latest)
    assert sort_direction("Which visits had at least two conditions?", latest) is None


def test_the_shuffled_copy_holds_the_same_rows_in_another_fixed_order(omop_db, tmp_path):
    a, b = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    shuffle_database(Path(omop_db), a)
    shuffle_database(Path(omop_db), b)
    src = duckdb.connect(str(omop_db), read_only=True)
    one, two = duckdb.connect(str(a), read_only=True), duckdb.connect(str(b), read_only=True)
    try:
        q = "SELECT person_id FROM cdm.person"
        assert sorted(one.execute(q).fetchall()) == sorted(src.execute(q).fetchall())
        assert one.execute(q).fetchall() != src.execute(q).fetchall()
        assert one.execute(q).fetchall() == two.execute(q).fetchall()
        assert one.execute("SELECT count(*) FROM sqlgold.build_info").fetchall()
    finally:
        src.close(), one.close(), two.close()
    assert SEED


def test_a_smell_named_both_on_and_off_or_unknown_is_refused() -> None:
    with pytest.raises(ValueError, match="both switched on and off"):
        SmellRules.switched(on=("float_order",), off=("float_order",))
    with pytest.raises(ValueError, match="unknown smell nope"):
        SmellRules.switched(off=("nope",))


def test_smells_reach_the_report_the_page_and_the_summary(omop_db, tmp_path):
    import json

    from click.testing import CliRunner

    from curate.cli import main

    source = tmp_path / "smelly_source.jsonl"
    rows = [
        {"format": "sqlgold.source/1", "id": rule, "question": question, "gold_sql": smelly}
        | {"gold_dialect": "duckdb"}
        for rule, question, smelly, _ in CASES
    ]
    source.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "tasks.jsonl"
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(out), "--no-cache"]
    ran = CliRunner().invoke(main, [*args, "--smell", "shuffled_copy", "--smell", "float_order"])
    assert ran.exit_code == 0, ran.output
    assert "with gold smells: duplicate_rows 1, float_order 1" in ran.output
    report = json.loads((tmp_path / "tasks_report.json").read_text())
    assert report["settings"]["smells"] == list(SMELLS)
    assert report["counts"]["smells_by_rule"] == {
        "duplicate_rows": 1,
        "float_order": 1,
        "numbers_as_text": 1,
        "sort_direction": 1,
    }
    assert report["counts"]["dropped_by_rule"] == {"verify/shuffled_copy": 1}
    md = (tmp_path / "tasks_report.md").read_text()
    assert "## Gold smells on kept tasks" in md and "| sort_direction | 1 |" in md
    page = (tmp_path / "tasks_report.html").read_text()
    assert "gold smells" in page and "smells: numbers_as_text" in page
    quiet = CliRunner().invoke(
        main, [*args, "--no-smell", "duplicate_rows", "--no-smell", "sort_direction"]
    )
    assert quiet.exit_code == 0, quiet.output
    report = json.loads((tmp_path / "tasks_report.json").read_text())
    assert report["counts"]["smells_by_rule"] == {"numbers_as_text": 1}
    assert report["counts"]["dropped"] == 0  # shuffled_copy is off unless asked
    both = CliRunner().invoke(main, [*args, "--smell", "float_order", "--no-smell", "float_order"])
    assert both.exit_code == 2 and "both switched on and off" in both.output
