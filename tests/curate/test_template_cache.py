"""The template cache gives every record the reading it would get alone."""

from __future__ import annotations

import doctest

import pytest

from curate.reading import templates as template_cache
from curate.reading.gold import read_gold
from curate.reading.templates import TemplateCache
from curate.sources.load import load_sources
from curate.sources.records import SourceRecord

CHECK = """-- check: @cdmTableName.@cdmFieldName
SELECT COUNT_BIG(*) AS n, '@cdmTableName' AS t
FROM @cdmDatabaseSchema.@cdmTableName cdmTable
WHERE cdmTable.@cdmFieldName IS NULL"""

FIELDS = [  # (table, field): person and visit fields of three types
    ("PERSON", "YEAR_OF_BIRTH"),
    ("PERSON", "MONTH_OF_BIRTH"),
    ("PERSON", "DAY_OF_BIRTH"),
    ("VISIT_OCCURRENCE", "VISIT_CONCEPT_ID"),
    ("VISIT_OCCURRENCE", "PROVIDER_ID"),
    ("PERSON", "GENDER_CONCEPT_ID"),
    ("PERSON", "BIRTH_DATETIME"),
    ("VISIT_OCCURRENCE", "VISIT_START_DATETIME"),
    ("DEATH", "DEATH_DATETIME"),
]


def record(table: str, field: str, sql: str = CHECK, **more) -> SourceRecord:
    return SourceRecord.from_dict(
        {
            "format": "sqlgold.source/1",
            "id": f"t/{table}.{field}",
            "question": "q",
            "gold_sql": sql,
            "gold_dialect": "ohdsi",
            "parameters": {
                "cdmDatabaseSchema": "cdm",
                "cdmTableName": table,
                "cdmFieldName": field,
                **more,
            },
        }
    )


def readings(records, enabled=True):
    cache = TemplateCache(read_gold, enabled=enabled)
    return [cache.read(r) for r in records], cache.stats()


def test_docstring_examples_run():
    assert doctest.testmod(template_cache).failed == 0


def test_records_of_one_shape_are_written_and_read_as_alone():
    records = [record(t, f) for t, f in FIELDS]
    cached, stats = readings(records)
    alone, _ = readings(records, enabled=False)
    assert [(n, g) for n, _, g in cached] == [(n, g) for n, _, g in alone]
    assert stats["written"] >= 3  # the integer fields after the first two of their shape
    assert all(
        "cdm.person" in g.sql or "cdm.visit_occurrence" in g.sql or "cdm.death" in g.sql
        for _, _, g in cached
    )


def test_a_hole_is_written_only_after_a_record_with_another_value_checked_it():
    cache = TemplateCache(read_gold)
    cache.read(record("PERSON", "YEAR_OF_BIRTH"))
    cache.read(record("PERSON", "YEAR_OF_BIRTH"))  # the same values: a copy
    assert cache.stats()["written"] == 1
    cache.read(record("PERSON", "MONTH_OF_BIRTH"))  # another field: read in full, checked
    assert cache.stats()["written"] == 1
    cache.read(record("PERSON", "DAY_OF_BIRTH"))
    assert cache.stats()["written"] == 2


def test_a_hole_a_condition_reads_is_part_of_the_shape():
    sql = CHECK + " {@cdmFieldName == 'GENDER_CONCEPT_ID'} ? {AND 1 = 1}"
    cache = TemplateCache(read_gold)
    key, holes = cache._key(record("PERSON", "YEAR_OF_BIRTH", sql))
    assert key is not None and set(holes) == {"cdmTableName"}
    records = [
        record("PERSON", "GENDER_CONCEPT_ID", sql),
        record("VISIT_OCCURRENCE", "GENDER_CONCEPT_ID", sql),
        record("DEATH", "GENDER_CONCEPT_ID", sql),
    ]
    cached, _ = readings(records)
    alone, _ = readings(records, enabled=False)
    assert [(n, g) for n, _, g in cached] == [(n, g) for n, _, g in alone]


def test_a_value_the_template_also_writes_is_not_a_hole():
    sql = "SELECT COUNT(*) AS n FROM @cdm.@tableName t JOIN @cdm.person p ON p.person_id = 1"
    cache = TemplateCache(read_gold)
    key, holes = cache._key(
        SourceRecord.from_dict(
            {
                "format": "sqlgold.source/1",
                "id": "x",
                "question": "q",
                "gold_sql": sql,
                "gold_dialect": "ohdsi",
                "parameters": {"cdm": "cdm", "tableName": "person"},
            }
        )
    )
    assert key is None and holes == {}


def test_the_schema_is_part_of_the_shape():
    cache = TemplateCache(read_gold)
    integer, _ = cache._key(record("PERSON", "YEAR_OF_BIRTH"))
    other_integer, _ = cache._key(record("PERSON", "MONTH_OF_BIRTH"))
    timestamp, _ = cache._key(record("PERSON", "BIRTH_DATETIME"))
    assert integer == other_integer and integer != timestamp


def test_a_warning_quoting_a_value_is_not_written_from_a_template():
    sql = "SELECT COUNT(*) AS n FROM @cdm.@t WHERE @f = 'some text with letters'"
    records = [
        SourceRecord.from_dict(
            {
                "format": "sqlgold.source/1",
                "id": f"x{i}",
                "question": "q",
                "gold_sql": sql,
                "gold_dialect": "ohdsi",
                "parameters": {"cdm": "cdm", "t": t, "f": f},
            }
        )
        for i, (t, f) in enumerate(
            [
                ("PERSON", "PERSON_SOURCE_VALUE"),
                ("PERSON", "GENDER_SOURCE_VALUE"),
                ("PERSON", "RACE_SOURCE_VALUE"),
            ]
        )
    ]
    cached, stats = readings(records)
    assert stats["written"] == 0
    assert all(g.warnings for _, _, g in cached)


def test_records_with_an_answer_or_another_dialect_are_always_read_in_full():
    tsql = SourceRecord.from_dict(
        {
            "format": "sqlgold.source/1",
            "id": "x",
            "question": "q",
            "gold_sql": "SELECT year_of_birth FROM cdm.person",
            "gold_dialect": "tsql",
        }
    )
    assert TemplateCache(read_gold)._key(tsql) == (None, {})


@pytest.fixture(scope="module")
def dqd_records(shared_dir):
    records, problems = load_sources(shared_dir / "corpora" / "dqd.jsonl", "jsonl")
    assert not problems
    return records[::4]


def test_every_dqd_record_reads_as_it_would_alone(dqd_records):
    """DataQualityDashboard's check instances: the cache changes no reading (every fourth)."""
    cached, stats = readings(dqd_records)
    alone, _ = readings(dqd_records, enabled=False)
    differ = [
        r.id
        for r, a, b in zip(dqd_records, cached, alone, strict=True)
        if (a[0], a[2]) != (b[0], b[2])
    ]
    assert differ == []
    assert stats["written"] > len(dqd_records) / 2, stats


@pytest.mark.parametrize("seed", range(20))
def test_a_skeleton_finds_a_value_among_its_words_as_the_search_does(seed):
    """The words looked up (once per skeleton) agree with the search for the value
    (a pattern per value) on names and numbers, whatever surrounds them."""
    import random

    rng = random.Random(seed)
    parts = ["person", "PERSON_id", "12", "3", "120", ".", " ", "_", "(", "x", "'", "\n", "a1", "ſ"]
    values = ["person", "Person", "person_id", "12", "3", "120", "x", "a1", "id"]
    for _ in range(40):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 12)))
        skeleton = template_cache._skeleton_of(text, frozenset())
        for value in values:
            assert skeleton.writes(value) == template_cache._occurs(value, text), (value, text)
