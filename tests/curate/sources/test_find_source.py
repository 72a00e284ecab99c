"""Finding one record of a large source file without importing all of it."""

from __future__ import annotations

import json

import pytest

from curate.sources.load import find_source
from score.errors import InputError


def _record(i: int) -> dict:
    return {
        "format": "sqlgold.source/1",
        "id": f"big-{i:05d}",
        "question": f"How many persons are there ({i})?",
        "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
        "gold_dialect": "duckdb",
    }


@pytest.fixture()
def big_source(tmp_path):
    lines = [json.dumps(_record(i)) for i in range(5000)]
    lines[10] = "{this line is broken"
    bad = _record(20)
    bad["gold_dialect"] = "klingon"
    lines[20] = json.dumps(bad)
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_the_record_asked_for_is_found(big_source):
    record = find_source(big_source, "jsonl", "big-04999")
    assert record.id == "big-04999" and record.gold_dialect == "duckdb"


def test_other_lines_problems_do_not_stop_it(big_source):
    assert find_source(big_source, "jsonl", "big-00011").id == "big-00011"


def test_the_record_asked_for_is_checked(big_source):
    with pytest.raises(InputError) as err:
        find_source(big_source, "jsonl", "big-00020")
    assert "big.jsonl:21" in str(err.value) and "big-00020" in str(err.value)


def test_a_missing_id_is_named(big_source):
    with pytest.raises(InputError, match="no record 'nope'"):
        find_source(big_source, "jsonl", "nope")


def test_other_formats_are_searched_too(querylibrary_dir):
    record = find_source(querylibrary_dir, "querylibrary", "querylibrary/C01")
    assert record.id == "querylibrary/C01"
