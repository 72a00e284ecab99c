"""sqlgold verify: one pair side by side, the verdict, where they differ, concept hints."""

from __future__ import annotations

from click.testing import CliRunner

from curate.cli import main
from curate.verify.concept_hints import concept_hints, concept_literals, home_table
from curate.verify.pair import verify_pair
from tests.paths import REPO

SOURCE = REPO / "data" / "benchmark" / "omop_source.jsonl"


def run(omop_db, *args):
    return CliRunner().invoke(main, ["verify", "--db", str(omop_db), *args])


def test_same_result_exits_zero_and_shows_both_sides(omop_db):
    result = run(
        omop_db,
        "--gold",
        "SELECT COUNT(*) / 100 AS hundreds FROM cdm.person",
        "--answer",
        "SELECT 11 AS h",
    )
    assert result.exit_code == 0, result.output
    out = result.output
    assert "gold (tsql, transpiled)" in out and "answer (duckdb)" in out
    assert "hundreds BIGINT" in out and "SAME RESULT" in out
    assert "integer_division" in out  # the rule that made 1130 / 100 equal 11


def test_different_results_say_where(omop_db):
    result = run(
        omop_db,
        "--gold",
        "SELECT gender_concept_id, COUNT(*) AS n FROM cdm.person GROUP BY gender_concept_id",
        "--answer",
        "SELECT count(*) AS persons, gender_concept_id AS g FROM cdm.person "
        "WHERE year_of_birth > 1950 GROUP BY 2",
    )
    assert result.exit_code == 3  # checked and found different (2 is click's usage error)
    out = result.output
    assert "DIFFERENT" in out
    assert "'gender_concept_id' -> 2 'g' (same values, another name)" in out
    assert "2 gold row(s) have no match in the prediction" in out


def test_a_difference_one_change_explains_is_named(omop_db):
    result = run(
        omop_db,
        "--gold",
        "SELECT gender_concept_id, COUNT(*) AS n FROM cdm.person GROUP BY gender_concept_id",
        "--answer",
        "SELECT gender_concept_id FROM cdm.person GROUP BY gender_concept_id",
    )
    assert result.exit_code == 3, result.output
    assert "cause: column_missing: the prediction lacks gold column(s) 'n'" in result.output
    ordered = run(
        omop_db,
        "--gold",
        "SELECT TOP 3 person_id FROM cdm.person ORDER BY person_id",
        "--answer",
        "SELECT person_id FROM (SELECT person_id FROM cdm.person ORDER BY 1 LIMIT 3) "
        "ORDER BY 1 DESC",
    )
    assert "cause: row_order: the same rows in another order" in ordered.output, ordered.output


def test_files_are_read_as_sql(omop_db, tmp_path):
    (tmp_path / "gold.sql").write_text("SELECT TOP 3 person_id FROM cdm.person ORDER BY person_id")
    (tmp_path / "answer.sql").write_text("SELECT person_id FROM cdm.person ORDER BY 1 LIMIT 3")
    result = run(
        omop_db, "--gold", str(tmp_path / "gold.sql"), "--answer", str(tmp_path / "answer.sql")
    )
    assert result.exit_code == 0, result.output
    assert "rows in order" in result.output


def test_a_source_record_by_id(omop_db):
    result = run(omop_db, "--id", "omop-201", "--source", str(SOURCE))
    assert result.exit_code == 0, result.output
    assert "SAME RESULT" in result.output


def test_a_side_that_fails_is_named(omop_db):
    result = run(omop_db, "--gold", "SELECT nope FROM cdm.person", "--answer", "SELECT 1")
    assert result.exit_code == 3
    assert "the gold did not run (catalog_error" in result.output


def test_usage_errors(omop_db):
    assert run(omop_db).exit_code == 2  # click usage error
    # --id reads the project's own source records unless told another (issue 57)
    unknown = run(omop_db, "--id", "x")
    assert unknown.exit_code == 1 and "omop_source.jsonl: no record 'x'" in unknown.output


def test_empty_gold_gets_concept_hints(omop_db, executor):
    gold = (
        "SELECT DISTINCT person_id FROM cdm.condition_occurrence "
        "WHERE condition_concept_id IN (312327, 40481087)"
    )
    check = verify_pair(gold.replace("40481087", "0 - 1"), "SELECT 1 WHERE false", executor)
    assert check.match and not check.ok
    hints = concept_hints(gold, executor)
    absent, present = hints
    assert (absent.concept_id, absent.occurrences, absent.table) == (
        312327,
        0,
        "condition_occurrence",
    )
    assert absent.alternatives and absent.alternatives[0][1]  # the most frequent, with its name
    assert present.occurrences > 0 and present.name == "Viral sinusitis"
    result = run(
        omop_db, "--gold", gold.replace(", 40481087", ""), "--answer", "SELECT 1 WHERE false"
    )
    assert result.exit_code == 3
    assert "never occurs in cdm.condition_occurrence.condition_concept_id" in result.output
    assert "most frequent there: 40481087 'Viral sinusitis'" in result.output


def test_concept_literals_walk_the_ast():
    sql = (
        "SELECT * FROM cdm.drug_exposure d JOIN cdm.person p ON p.person_id = d.person_id "
        "WHERE d.drug_concept_id = 1127433 AND 8532 = p.gender_concept_id "
        "AND d.quantity = 5 AND d.drug_type_concept_id IN (38000177, -1)"
    )
    assert sorted(concept_literals(sql)) == [
        ("drug_concept_id", 1127433),
        ("drug_type_concept_id", -1),
        ("drug_type_concept_id", 38000177),
        ("gender_concept_id", 8532),
    ]
    assert home_table("measurement_concept_id") == "measurement"
    assert home_table("no_such_concept_id") is None


def test_verify_applies_the_reference_rules_curate_applies(omop_db):
    result = run(
        omop_db,
        "--gold",
        "SELECT TOP 3 person_id FROM cdm.person",
        "--answer",
        "SELECT person_id FROM cdm.person LIMIT 3",
    )
    assert result.exit_code == 3
    assert "reference rule: FAILS verify/limit_needs_order" in result.output
    now = "SELECT DATEDIFF(year, '2000-01-01', GETDATE()) AS y"
    result = run(omop_db, "--gold", now, "--answer", "SELECT 25 AS y")
    assert result.exit_code == 3 and "FAILS verify/no_current_date" in result.output
    result = run(omop_db, "--today", "2025-12-31", "--gold", now, "--answer", "SELECT 25 AS y")
    assert result.exit_code == 0, result.output
    assert "reference rules: the gold meets every one" in result.output
    assert "SAME RESULT" in result.output
