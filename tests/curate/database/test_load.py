"""``sqlgold db load``: the embedded CDM copied into a real PostgreSQL server."""

from __future__ import annotations

import duckdb
import psycopg
import pytest
from click.testing import CliRunner

from curate.cli import main as cli
from curate.database.load import READER_ROLE, load_into_postgres
from score.cdm.schema import CDM_FIELD_TYPES


def test_every_table_and_row_arrives_with_cdm_types(pg_cdm, omop_db):
    duck = duckdb.connect(str(omop_db), read_only=True)
    with psycopg.connect(pg_cdm.admin_url) as pg:
        loaded = {
            r[0]
            for r in pg.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'cdm'"
            )
        }
        assert {"person", "measurement", "concept"} <= loaded
        for table in ("person", "measurement", "drug_exposure", "concept"):
            (expected,) = duck.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()
            (got,) = pg.execute(f"SELECT count(*) FROM cdm.{table}").fetchone()
            assert got == expected, table
        types = dict(
            pg.execute(
                "SELECT column_name, data_type || coalesce('(' || character_maximum_length "
                "|| ')', '') FROM information_schema.columns "
                "WHERE table_schema = 'cdm' AND table_name = 'measurement'"
            ).fetchall()
        )
    spec = CDM_FIELD_TYPES["measurement"]
    assert spec["value_as_number"] == "float" and types["value_as_number"] == "numeric"
    assert spec["measurement_date"] == "date" and types["measurement_date"] == "date"
    assert types["measurement_datetime"] == "timestamp without time zone"
    assert types["measurement_source_value"] == "character varying(50)"
    duck.close()


def test_values_survive_the_copy(pg_cdm, omop_db):
    """NULLs stay NULL, dates and numbers keep their values."""
    sql = (
        "SELECT measurement_id, measurement_date, value_as_number, value_source_value "
        "FROM cdm.measurement ORDER BY measurement_id LIMIT 200"
    )
    nulls = (
        "SELECT count(*) FILTER (WHERE value_as_number IS NULL), "
        "count(*) FILTER (WHERE unit_source_value IS NULL), "
        "count(*) FILTER (WHERE unit_source_value = ''), sum(value_as_number) "
        "FROM cdm.measurement"
    )
    duck = duckdb.connect(str(omop_db), read_only=True)
    expected, expected_nulls = duck.execute(sql).fetchall(), duck.execute(nulls).fetchone()
    duck.close()
    with psycopg.connect(pg_cdm.admin_url) as pg:
        got, got_nulls = pg.execute(sql).fetchall(), pg.execute(nulls).fetchone()
    assert [(a, b, None if c is None else float(c), d) for a, b, c, d in got] == expected
    assert got_nulls[:3] == expected_nulls[:3]
    assert float(got_nulls[3]) == pytest.approx(expected_nulls[3], rel=1e-12)


def test_the_reader_reads_cdm_and_nothing_else(pg_cdm):
    with psycopg.connect(pg_cdm.reader_url) as pg:
        assert pg.execute("SELECT count(*) FROM cdm.person").fetchone()[0] == 1130
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute("INSERT INTO cdm.person (person_id) VALUES (-1)")
        pg.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute("CREATE TABLE cdm.x (a int)")
        pg.rollback()
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute("SELECT pg_read_file('/etc/passwd')")
        pg.rollback()
        flags = pg.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = %s",
            [READER_ROLE],
        ).fetchone()
    assert flags == (False, False, False)


def test_a_failed_load_keeps_the_previous_cdm(pg_cdm, tmp_path):
    """A source that breaks half-way leaves the database as it was (one transaction)."""
    pg_server, password = pg_cdm.server, pg_cdm.reader_password
    db = pg_server.url()
    with psycopg.connect(db, autocommit=True) as pg:
        pg.execute("CREATE DATABASE load_failure")
    url = pg_server.url(db="load_failure")
    good = tmp_path / "good.duckdb"
    con = duckdb.connect(str(good))
    con.execute("CREATE SCHEMA cdm")
    con.execute("CREATE TABLE cdm.person (person_id INTEGER, gender_concept_id INTEGER)")
    con.execute("INSERT INTO cdm.person VALUES (1, 8507), (2, 8532)")
    con.close()
    load_into_postgres(url, good, reader_password=password)
    bad = tmp_path / "bad.duckdb"
    con = duckdb.connect(str(bad))
    con.execute("CREATE SCHEMA cdm")
    con.execute("CREATE TABLE cdm.person (person_id VARCHAR)")
    con.execute("INSERT INTO cdm.person VALUES ('not a number')")
    con.close()
    with pytest.raises(Exception, match="loading into PostgreSQL failed"):
        load_into_postgres(url, bad, reader_password=password)
    with psycopg.connect(url) as pg:
        assert pg.execute("SELECT count(*) FROM cdm.person").fetchone()[0] == 2


def test_cli_prints_the_reader_url_and_refuses_a_non_url(pg_cdm, omop_db, tmp_path):
    pg_server, password = pg_cdm.server, pg_cdm.reader_password
    runner = CliRunner()
    bad = runner.invoke(cli, ["db", "load", "localhost/omop", "--from", str(omop_db)])
    assert bad.exit_code != 0 and "postgresql://" in bad.output
    small = tmp_path / "small.duckdb"
    con = duckdb.connect(str(small))
    con.execute("CREATE SCHEMA cdm")
    con.execute("CREATE TABLE cdm.person (person_id INTEGER, person_source_value VARCHAR)")
    con.execute("INSERT INTO cdm.person VALUES (1, '" + "x" * 80 + "')")
    con.close()
    with psycopg.connect(pg_server.url(), autocommit=True) as pg:
        pg.execute("CREATE DATABASE load_cli")
    url = pg_server.url(db="load_cli")
    done = runner.invoke(
        cli,
        ["db", "load", url, "--from", str(small), "--quiet", "--reader-password", password],
    )
    assert done.exit_code == 0, done.output
    assert "widened to text: person_source_value" in done.output
    assert "nocase       cdm_nocase" in done.output  # the collation check's twin
    line = [x for x in done.output.splitlines() if x.startswith("reader")][0]
    reader = line.split()[1]
    assert reader.startswith(f"postgresql://{READER_ROLE}:")
    with psycopg.connect(reader) as pg:
        assert pg.execute("SELECT length(person_source_value) FROM cdm.person").fetchone()[0] == 80


def test_the_case_insensitive_twin_reads_the_same_rows_ignoring_case(pg_cdm):
    """Schema cdm_nocase: every table as a view, text under a case-insensitive collation,
    readable by the reader and by nobody's writes."""
    with psycopg.connect(pg_cdm.reader_url) as pg:
        tables = {
            r[0]
            for r in pg.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'cdm'"
            )
        }
        views = {
            r[0]
            for r in pg.execute(
                "SELECT table_name FROM information_schema.views WHERE table_schema = 'cdm_nocase'"
            )
        }
        assert views == tables
        plain = pg.execute(
            "SELECT count(*), count(DISTINCT concept_class_id) FROM cdm.concept "
            "WHERE vocabulary_id = 'snomed'"
        ).fetchone()
        twin = pg.execute(
            "SELECT count(*), count(DISTINCT upper(concept_class_id)) FROM cdm_nocase.concept "
            "WHERE vocabulary_id = 'snomed'"
        ).fetchone()
        snomed = pg.execute(
            "SELECT count(*), count(DISTINCT upper(concept_class_id)) FROM cdm.concept "
            "WHERE vocabulary_id = 'SNOMED'"
        ).fetchone()
        assert plain[0] == 0 and twin == snomed and twin[0] > 0
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            pg.execute("CREATE VIEW cdm_nocase.x AS SELECT 1")
        pg.rollback()
    with psycopg.connect(pg_cdm.admin_url) as pg:
        (text_columns,) = pg.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = 'cdm_nocase' "
            "AND collation_name = 'nocase'"
        ).fetchone()
    assert text_columns > 20
