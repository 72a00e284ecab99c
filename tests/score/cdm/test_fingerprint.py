"""The database fingerprint: defined on values, and checked rather than trusted."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from curate.cli import main
from score.cdm.duckdb_file import describe_database
from score.cdm.fingerprint import FINGERPRINT_FORMAT, compute_fingerprint
from score.cdm.fingerprint_check import FingerprintCache, checked_fingerprint, file_state
from score.cli.exit_codes import FOUND_DIFFERENT
from score.execution.executor import Executor


def _fingerprint(*statements: str) -> str:
    con = duckdb.connect()
    con.execute("CREATE SCHEMA s")
    for sql in statements:
        con.execute(sql)
    fingerprint, _ = compute_fingerprint(con, "memory", "s")
    con.close()
    return fingerprint


BASE = (
    "CREATE TABLE s.person (person_id INTEGER, year_of_birth INTEGER, "
    "person_source_value VARCHAR, birth_datetime TIMESTAMP)",
    "CREATE TABLE s.measurement (measurement_id BIGINT, value_as_number DOUBLE, "
    "measurement_date DATE)",
    "INSERT INTO s.person VALUES (1, 1950, 'a', TIMESTAMP '1950-01-01 00:00:00'), "
    "(2, NULL, NULL, TIMESTAMP '1960-05-06 07:08:09.5')",
    "INSERT INTO s.measurement VALUES (10, 2.5, DATE '2020-01-02'), (11, 1.0 / 3, NULL)",
)


def test_the_same_values_give_the_same_fingerprint_whatever_the_types_and_layout():
    """Other engines hold the same data under other type names, column orders and row
    orders (an ETL's DECIMAL for a CDM float, BIGINT for INTEGER, a DATE stored as a
    midnight TIMESTAMP): none of that is part of the fingerprint."""
    base = _fingerprint(*BASE)
    other = _fingerprint(
        "CREATE TABLE s.person (birth_datetime TIMESTAMP, person_source_value TEXT, "
        "year_of_birth BIGINT, person_id HUGEINT)",
        "CREATE TABLE s.measurement (measurement_date TIMESTAMP, value_as_number DECIMAL(18, 6), "
        "measurement_id INTEGER)",
        "INSERT INTO s.person VALUES (TIMESTAMP '1960-05-06 07:08:09.5', NULL, NULL, 2), "
        "(DATE '1950-01-01', 'a', 1950, 1)",
        "INSERT INTO s.measurement VALUES (NULL, 0.333333, 11), (DATE '2020-01-02', 2.5, 10)",
    )
    assert other == base


@pytest.mark.parametrize(
    "change",
    [
        "UPDATE s.person SET person_source_value = 'A' WHERE person_id = 1",
        "UPDATE s.person SET person_source_value = '\\N' WHERE person_id = 2",  # text, not NULL
        "UPDATE s.person SET year_of_birth = NULL WHERE person_id = 1",
        "UPDATE s.measurement SET value_as_number = 2.500001 WHERE measurement_id = 10",
        "INSERT INTO s.measurement VALUES (10, 2.5, DATE '2020-01-02')",  # a duplicate row
        "DELETE FROM s.person WHERE person_id = 2",
        "ALTER TABLE s.person RENAME COLUMN year_of_birth TO yob",
    ],
)
def test_any_change_of_values_changes_it(change):
    assert _fingerprint(*BASE, change) != _fingerprint(*BASE)


def test_a_tab_inside_a_text_cannot_pose_as_a_column_boundary():
    a = _fingerprint(
        "CREATE TABLE s.person (a VARCHAR, b VARCHAR)", "INSERT INTO s.person VALUES ('x\ty', 'z')"
    )
    b = _fingerprint(
        "CREATE TABLE s.person (a VARCHAR, b VARCHAR)", "INSERT INTO s.person VALUES ('x', 'y\tz')"
    )
    assert a != b


def test_the_embedded_database_fingerprint_is_the_one_build_stored_under_this_format(omop_db):
    info = describe_database(omop_db, recompute=True)
    assert info.fingerprint_check.how == "computed"
    assert info.fingerprint_check.stored == info.fingerprint
    assert info.fingerprint_check.stored_format == FINGERPRINT_FORMAT


def test_a_database_changed_after_build_is_not_trusted(omop_db: Path, changed_db: Path):
    """The issue: after deleting 49 persons from a copy, `db info` printed the stored
    fingerprint.  Now the data's own fingerprint is computed, and the stored one is only
    the cross-check that says the file changed."""
    original = describe_database(omop_db).fingerprint
    info = describe_database(changed_db)
    assert info.fingerprint != original
    assert info.fingerprint_check.stored == original
    assert info.fingerprint_check.stored_differs
    with Executor(changed_db) as ex:
        assert ex.fingerprint == info.fingerprint
    result = CliRunner().invoke(main, ["db", "info", "--db", str(changed_db)])
    assert result.exit_code == FOUND_DIFFERENT, result.output
    assert "DIFFERS from the one db build stored" in result.output
    assert "was changed after `db build`" in result.output


def test_the_cache_serves_only_the_exact_file_state(omop_db: Path, tmp_path: Path):
    path = tmp_path / "db.duckdb"
    path.write_bytes(omop_db.read_bytes())
    cache = FingerprintCache(tmp_path / "cache")

    def check(recompute: bool = False):
        con = duckdb.connect()
        con.execute(f"ATTACH '{path}' AS omop (READ_ONLY)")
        try:
            return checked_fingerprint(
                con, "omop", "cdm", path, {}, cache=cache, recompute=recompute
            )
        finally:
            con.close()

    first = check()
    assert first.how == "computed"
    assert check().how == "cached" and check().fingerprint == first.fingerprint
    assert check(recompute=True).how == "computed"
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM cdm.death WHERE person_id = (SELECT min(person_id) FROM cdm.death)")
    con.close()
    after = check()
    assert after.how == "computed" and after.fingerprint != first.fingerprint
    # a damaged or forged entry is never trusted: the state must match exactly
    (entry,) = (tmp_path / "cache").glob("*.json")
    payload = json.loads(entry.read_text())
    payload["fingerprint"] = "0" * 64
    payload["state"] = file_state(tmp_path / "elsewhere.duckdb")
    entry.write_text(json.dumps(payload))
    assert check().fingerprint == after.fingerprint
    entry.write_text("{not json")
    assert check().fingerprint == after.fingerprint


def test_entries_of_deleted_database_files_are_forgotten(omop_db: Path, tmp_path: Path):
    cache = FingerprintCache(tmp_path / "cache")
    first, second = tmp_path / "a.duckdb", tmp_path / "b.duckdb"
    for path in (first, second):
        path.write_bytes(omop_db.read_bytes())
    cache.store(file_state(first), "cdm", "a" * 64)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    first.unlink()
    cache.store(file_state(second), "cdm", "b" * 64)
    assert [
        json.loads(p.read_text())["fingerprint"] for p in (tmp_path / "cache").glob("*.json")
    ] == ["b" * 64]
