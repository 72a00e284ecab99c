"""OHDSI SQL as written in the wild: Achilles' 300 analyses and DataQualityDashboard's 2,533
check instances (../shared/corpora), each curated in full once by the command line
(``--jobs 2``, no ``--strict``) and its report shared by the tests below.

The corpora stay in ../shared; these tests skip when it is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main


def _curated(shared_dir: Path, omop_db: Path, out: Path, name: str) -> dict:
    source = shared_dir / "corpora" / f"{name}.jsonl"
    if not source.is_file():
        pytest.skip(f"{source} is not present")
    result = CliRunner().invoke(
        main,
        [
            "curate",
            str(source),
            "--db",
            str(omop_db),
            "--out",
            str(out / f"{name}_tasks.jsonl"),
            "--jobs",
            "2",
            "-q",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output + result.stderr
    report = json.loads((out / f"{name}_report.json").read_text())
    report["_markdown"] = (out / f"{name}_report.md").read_text()
    # the task lines, after the header line the task file starts with
    report["_tasks"] = (out / f"{name}_tasks.jsonl").read_text().splitlines()[1:]
    return report


@pytest.fixture(scope="module")
def achilles(shared_dir, omop_db, tmp_path_factory) -> dict:
    return _curated(shared_dir, omop_db, tmp_path_factory.mktemp("achilles"), "achilles")


@pytest.fixture(scope="module")
def dqd(shared_dir, omop_db, tmp_path_factory) -> dict:
    return _curated(shared_dir, omop_db, tmp_path_factory.mktemp("dqd"), "dqd")


def _accounted(report: dict, records: int) -> None:
    """Every record is in the report once, kept or dropped for a named rule."""
    entries = report["records"]
    assert len(entries) == len({e["id"] for e in entries}) == records
    assert report["problems"] == []
    for entry in entries:
        assert entry["status"] in ("kept", "dropped")
        if entry["status"] == "dropped":
            assert entry["stage"] and entry["rule"] and entry["reason"], entry
            assert entry["stage"] != "internal", entry
        else:
            assert "warnings" not in entry  # unresolved_semantics drops them by default
    counts = report["counts"]
    assert counts["kept"] + counts["dropped"] == records == counts["records"]
    assert counts["kept"] == len(report["_tasks"])


def test_achilles_as_written(achilles):
    _accounted(achilles, 300)
    counts = achilles["counts"]
    assert counts["kept"] >= 170
    rules = counts["dropped_by_rule"]
    # SqlRender's plain-text names (@tempAchillesPrefix_1) and the result table each
    # analysis ends by filling: no analysis is dropped for either
    missing = [e["id"] for e in achilles["records"] if e.get("rule") == "missing_parameter"]
    assert sorted(missing) == [
        "achilles/cost_distribution_template.sql",
        "achilles/create_analysis_table.sql",
        "achilles/create_result_concept_table.sql",
        "achilles/raw_cost_template.sql",
    ]  # templates Achilles fills in R before rendering, not analyses
    assert "ohdsi/no_final_select" not in rules
    kept = {e["id"]: e for e in achilles["records"] if e["status"] == "kept"}
    assert "achilles/610.sql" in kept
    assert any("its rows are the result" in n for n in kept["achilles/610.sql"]["notes"])


def test_achilles_keeps_sql_server_semantics(achilles):
    tasks = {t["id"]: t for t in map(json.loads, achilles["_tasks"])}
    gold = tasks["achilles/0.sql"]["gold_sql"]  # the last of the two results it writes
    assert "#" not in gold and "tmpach" not in gold and "min_value" in gold


def test_dqd_as_written(dqd):
    _accounted(dqd, 2533)
    counts = dqd["counts"]
    assert counts["kept"] >= 1200
    rules = counts["dropped_by_rule"]
    # the record's own cohort = FALSE wins over the schema placeholder, and ISNUMERIC of
    # a number is exact
    assert "ohdsi/bad_condition" not in rules
    assert not any(key.startswith(("ohdsi/", "transpile/")) for key in rules), rules
    assert "verify/runs" not in rules


def test_dqd_identical_results_are_listed(dqd):
    groups = dqd["identical_results"]
    assert groups and groups[0]["tasks"] >= 400
    assert sum(g["tasks"] for g in groups) == dqd["counts"]["kept_in_identical_result_groups"]
    assert "## Kept tasks with identical gold results" in dqd["_markdown"]
