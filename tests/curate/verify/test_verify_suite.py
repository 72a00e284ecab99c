"""sqlgold verify --suite: after the base database, the first variant of a test suite on
which gold and answer differ, with both results there (the suite of
:mod:`tests.score.suite.made_suite`)."""

from __future__ import annotations

from click.testing import CliRunner

from curate.cli import main
from score.cli.exit_codes import FOUND_DIFFERENT
from score.defaults import DEFAULT_SUITE_CACHE

GOLD = "SELECT count(*) AS n FROM cdm.person WHERE gender_concept_id IN (8507, 8532)"


def verify(db, suite, gold, answer):
    args = ["verify", "--db", str(db), "--suite", str(suite.folder), "--gold-dialect", "duckdb"]
    return CliRunner().invoke(main, [*args, "--gold", gold, "--answer", answer])


def test_the_first_variant_that_tells_the_pair_apart_is_shown_with_both_results(
    omop_db, made_suite, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    result = verify(omop_db, made_suite, GOLD, "SELECT count(*) AS n FROM cdm.person")
    assert result.exit_code == FOUND_DIFFERENT, result.output
    out = result.stdout
    assert "SAME RESULT" in out  # on the base database
    assert "DIFFERENT on variant v3-genders (3 of 3 checked)" in out
    assert "gold on v3-genders" in out and "answer on v3-genders" in out
    assert "1017" in out and "1130" in out  # the gold's count there, and the answer's
    assert DEFAULT_SUITE_CACHE.is_dir()  # the variants' databases, in the user's cache
    assert not list(tmp_path.iterdir())  # and nothing in the current folder


def test_a_pair_the_same_on_every_variant_exits_zero(omop_db, made_suite, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    answer = "SELECT count(person_id) AS n FROM cdm.person WHERE gender_concept_id IN (8532, 8507)"
    result = verify(omop_db, made_suite, GOLD, answer)
    assert result.exit_code == 0, result.output
    assert "SAME RESULT on every variant" in result.stdout


def test_a_suite_built_on_another_database_is_one_error_line(changed_db, made_suite):
    result = verify(changed_db, made_suite, GOLD, GOLD)
    assert result.exit_code == 1, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "built on another base database" in lines[0]
    assert result.stdout == ""


def test_a_gold_alone_says_the_suite_was_not_checked(omop_db, made_suite, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["verify", "--db", str(omop_db), "--suite", str(made_suite.folder)]
    result = CliRunner().invoke(main, [*args, "--gold-dialect", "duckdb", "--gold", GOLD])
    assert result.exit_code == 0, result.output
    assert "test suite: not checked (no answer to compare the gold with)" in result.stdout
