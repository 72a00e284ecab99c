"""The embedded database builder: row counts, CDM shape, derived vocabulary, fingerprint."""

from __future__ import annotations

import csv
from pathlib import Path

import duckdb
import pytest

from score.cdm.duckdb_file import describe_database
from score.cdm.embedded import build_database, plan_columns, synthea_folder
from score.cdm.schema import CDM_TABLES, column_names
from score.errors import DatabaseError


def csv_records(path: Path) -> int:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        next(reader)
        return sum(1 for row in reader if row)


@pytest.fixture(scope="module")
def con(omop_db: Path):
    c = duckdb.connect(str(omop_db), read_only=True)
    yield c
    c.close()


def test_every_cdm_table_exists_with_cdm_columns(con):
    for table in CDM_TABLES:
        cols = [
            r[0]
            for r in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'cdm' "
                "AND table_name = ? ORDER BY column_index",
                [table],
            ).fetchall()
        ]
        assert tuple(cols) == column_names(table), table


def test_row_counts_match_the_csv_files(con):
    files = sorted(synthea_folder().glob("*.csv"))
    assert len(files) == 15
    for path in files:
        table = path.stem.lower()
        (rows,) = con.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()
        assert rows == csv_records(path), table


def test_known_row_counts(con):
    expected = {"person": 1130, "device_exposure": 4995, "measurement": 199514, "specimen": 4995}
    for table, n in expected.items():
        assert con.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()[0] == n


def test_device_exposure_loaded_by_cdm_order_despite_its_53_header(con):
    # the header names 15 columns, the rows have 19: by name the 5.4 columns would shift
    row = con.execute(
        "SELECT device_exposure_id, person_id, device_concept_id, device_exposure_start_date, "
        "device_type_concept_id FROM cdm.device_exposure ORDER BY device_exposure_id LIMIT 1"
    ).fetchone()
    assert row[0] == 1 and row[1] == 1 and row[2] == 21332862
    assert str(row[3]) == "2010-03-24" and row[4] == 32812


def test_specimen_header_with_trailing_spaces_maps_by_name(con):
    (n,) = con.execute(
        "SELECT count(*) FROM cdm.specimen WHERE specimen_concept_id IS NOT NULL "
        "AND specimen_type_concept_id = 32832"
    ).fetchone()
    assert n > 0


def test_cdm_types(con):
    types = dict(
        con.execute(
            "SELECT column_name, data_type FROM duckdb_columns() "
            "WHERE schema_name = 'cdm' AND table_name = 'measurement'"
        ).fetchall()
    )
    assert types["value_as_number"] == "DOUBLE"
    assert types["measurement_date"] == "DATE"
    assert types["measurement_datetime"] == "TIMESTAMP"
    assert types["person_id"] == "INTEGER"


def test_derived_vocabulary_follows_omop_conventions_only(con):
    (standard,) = con.execute(
        "SELECT count(*) FROM cdm.concept WHERE standard_concept = 'S'"
    ).fetchone()
    assert standard > 0
    assert con.execute(
        "SELECT count(*), count(*) FILTER (WHERE ancestor_concept_id = descendant_concept_id "
        "AND min_levels_of_separation = 0 AND max_levels_of_separation = 0) "
        "FROM cdm.concept_ancestor"
    ).fetchone() == (standard, standard)
    assert con.execute(
        "SELECT count(*), count(*) FILTER (WHERE concept_id_1 = concept_id_2 "
        "AND relationship_id = 'Maps to') FROM cdm.concept_relationship"
    ).fetchone() == (standard, standard)
    for table, column in (
        ("vocabulary", "vocabulary_id"),
        ("domain", "domain_id"),
        ("concept_class", "concept_class_id"),
    ):
        used = con.execute(f"SELECT count(DISTINCT {column}) FROM cdm.concept").fetchone()[0]
        assert con.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()[0] == used
    for table in ("concept_synonym", "relationship", "drug_strength", "source_to_concept_map"):
        assert con.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()[0] == 0


def test_fingerprint_is_stable_across_builds_and_stored(omop_db: Path, tmp_path: Path):
    second = build_database(tmp_path / "again.duckdb")
    first = describe_database(omop_db)
    assert first.fingerprint_check.stored == first.fingerprint  # db build stored the same
    assert not first.fingerprint_check.stored_differs
    assert second.fingerprint == first.fingerprint
    recomputed = describe_database(omop_db, recompute=True)
    assert recomputed.fingerprint_check.how == "computed"
    assert recomputed.fingerprint == first.fingerprint


def test_fingerprint_changes_with_content(omop_db: Path, tmp_path: Path):
    other = tmp_path / "changed.duckdb"
    con = duckdb.connect(str(other))
    con.execute(f"ATTACH '{omop_db}' AS src (READ_ONLY)")
    con.execute("CREATE SCHEMA cdm")
    for table in CDM_TABLES:
        con.execute(f"CREATE TABLE cdm.{table} AS SELECT * FROM src.cdm.{table}")
    con.execute("DELETE FROM cdm.death WHERE person_id = (SELECT min(person_id) FROM cdm.death)")
    con.close()
    assert describe_database(other).fingerprint != describe_database(omop_db).fingerprint


def test_failed_build_leaves_the_existing_database_intact(omop_db: Path, tmp_path: Path):
    out = tmp_path / "keep.duckdb"
    out.write_bytes(omop_db.read_bytes())
    before = out.read_bytes()
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "PERSON.csv").write_text("person_id,gender_concept_id\n1,not-a-number\n")
    with pytest.raises(DatabaseError, match="PERSON.csv"):
        build_database(out, csv_dir=bad)
    assert out.read_bytes() == before
    assert not list(tmp_path.glob(".keep.duckdb*"))


def test_unknown_csv_file_is_refused(tmp_path: Path):
    folder = tmp_path / "csv"
    folder.mkdir()
    (folder / "PATIENTS.csv").write_text("id\n1\n")
    with pytest.raises(DatabaseError, match="PATIENTS"):
        build_database(tmp_path / "x.duckdb", csv_dir=folder)


def test_plan_columns_refuses_a_file_it_cannot_map():
    with pytest.raises(DatabaseError, match="cannot map"):
        plan_columns("death", ["person_id", "when"], {3}, Path("DEATH.csv"))


def test_athena_vocabulary_folder_replaces_the_derived_vocabulary(tmp_path: Path):
    vocab = tmp_path / "athena"
    vocab.mkdir()
    (vocab / "CONCEPT.csv").write_text(
        "concept_id\tconcept_name\tdomain_id\tvocabulary_id\tconcept_class_id\t"
        "standard_concept\tconcept_code\tvalid_start_date\tvalid_end_date\tinvalid_reason\n"
        "201826\tType 2 diabetes mellitus\tCondition\tSNOMED\tClinical Finding\tS\t44054006\t"
        "19700101\t20991231\t\n"
        "201820\tDiabetes mellitus\tCondition\tSNOMED\tClinical Finding\tS\t73211009\t"
        "19700101\t20991231\t\n"
    )
    (vocab / "CONCEPT_ANCESTOR.csv").write_text(
        "ancestor_concept_id\tdescendant_concept_id\tmin_levels_of_separation\t"
        "max_levels_of_separation\n201820\t201826\t1\t1\n201820\t201820\t0\t0\n"
    )
    out = tmp_path / "athena.duckdb"
    build_database(out, vocab_dir=vocab)
    con = duckdb.connect(str(out), read_only=True)
    assert con.execute("SELECT count(*) FROM cdm.concept").fetchone() == (2,)
    assert con.execute(
        "SELECT valid_start_date::VARCHAR FROM cdm.concept WHERE concept_id = 201826"
    ).fetchone() == ("1970-01-01",)
    assert con.execute(
        "SELECT descendant_concept_id FROM cdm.concept_ancestor WHERE min_levels_of_separation = 1"
    ).fetchall() == [(201826,)]
    assert con.execute("SELECT count(*) FROM cdm.vocabulary").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM cdm.person").fetchone() == (1130,)
    assert con.execute(
        "SELECT value FROM sqlgold.build_info WHERE key = 'vocabulary'"
    ).fetchone() == ("athena",)
    con.close()
