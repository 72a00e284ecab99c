"""``sqlgold verify`` as a new user first runs it (issue 57): ``make verify`` with a gold
alone and a fixed today, ``--id`` on the project's own records without ``--source``, an
empty value, and DuckDB's infinities in the side-by-side display."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli_run import one_line_error, sqlgold
from tests.paths import REPO


def test_make_verify_with_a_gold_alone_and_a_fixed_today(omop_db, tmp_path):
    """Finding 4: `make verify GOLD=...` alone failed ("--answer: a folder ...", the
    empty ANSWER passed on as ""), and there was no TODAY=."""
    installed = tmp_path / "installed"  # stands for the venv's stamp: nothing installs
    installed.touch()
    make = ["make", "-s", "-C", str(REPO), "verify", f"DB={omop_db}", f"STAMP={installed}",
            f"SQLGOLD={sys.executable} -m curate.cli"]  # fmt: skip
    done = subprocess.run(
        [*make, "GOLD=SELECT CURRENT_DATE AS d, COUNT(*) AS n FROM person", "TODAY=2020-01-02"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "2020-01-02 | 1130" in done.stdout and "no reference answer" in done.stdout
    bare = subprocess.run(make, capture_output=True, text=True, timeout=60)
    assert bare.returncode == 2 and "usage: make verify GOLD=" in bare.stderr


def test_verify_id_reads_the_projects_own_records_without_source(omop_db, tmp_path):
    """Finding 11: `verify --id omop-001` needed --source, although the shipped benchmark
    is the obvious default; where it is not, the usage error says so."""
    done = sqlgold("verify", "--db", omop_db, "--id", "omop-001", cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert "SAME RESULT" in done.stdout
    elsewhere = sqlgold("verify", "--db", omop_db, "--id", "omop-001", cwd=tmp_path)
    assert elsewhere.returncode == 2
    assert "--id needs --source (data/benchmark/omop_source.jsonl is not here)" in elsewhere.stderr


@pytest.mark.parametrize("option", ["--gold", "--answer"])
def test_an_empty_query_is_one_line_naming_the_option(omop_db, option):
    args = {"--gold": "SELECT 1", "--answer": "SELECT 1", option: " "}
    done = sqlgold("verify", "--db", omop_db, *[x for kv in args.items() for x in kv])
    one_line_error(done, f"{option}: empty (give a SQL file or SQL text)")


@pytest.mark.parametrize("profile", ["sqlgold", "spider2"])
def test_infinities_are_shown_as_duckdb_writes_them(omop_db, profile):
    """Finding 5: `verify --profile spider2` on '-infinity'::TIMESTAMPTZ ended in an
    OverflowError from the side-by-side display (the comparison itself was right)."""
    sql = "SELECT '-infinity'::TIMESTAMPTZ AS t, 'infinity'::DATE AS d, 1 AS n"
    done = sqlgold("verify", "--db", omop_db, "--gold-dialect", "duckdb", "--gold", sql,
                   "--answer", sql, "--profile", profile,
                   env={**os.environ, "TZ": "UTC"})  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert "-infinity" in done.stdout and "| infinity " in done.stdout
    assert "SAME RESULT" in done.stdout
