"""Vocabulary variants (:mod:`score.suite.vocabulary_variants`) made from the test
database's real vocabulary: each kind changes what it says and keeps every foreign key
and every schema; the same seed gives the same tables."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from score.suite.suite_file import VOCABULARY_TABLES
from score.suite.vocabulary_variants import (
    KINDS,
    named_concepts,
    reads_vocabulary,
    vocabulary_variant,
)

GOLD = (
    "SELECT concept_id, concept_class_id, domain_id FROM cdm.concept "
    "WHERE concept_id = 8507 OR concept_code = 'F'"
)


@pytest.fixture(scope="module")
def vocabulary(omop_db: Path) -> dict[str, pa.Table]:
    con = duckdb.connect(str(omop_db), read_only=True)
    try:
        return {
            t: con.sql(f'SELECT * FROM cdm."{t}" ORDER BY ALL').to_arrow_table()
            for t in VOCABULARY_TABLES
        }
    finally:
        con.close()


def _by_id(table: pa.Table) -> dict[int, dict]:
    return {r["concept_id"]: r for r in table.to_pylist()}


@pytest.mark.parametrize("kind", KINDS)
def test_each_kind_keeps_every_table_and_schema_and_is_seeded(vocabulary, kind) -> None:
    made = vocabulary_variant(vocabulary, [GOLD], kind, "0:w0")
    assert set(made) == set(vocabulary)
    for table, rows in made.items():
        assert rows.schema == vocabulary[table].schema, table
    assert made == vocabulary_variant(vocabulary, [GOLD], kind, "0:w0")
    assert any(made[t] != vocabulary[t] for t in made)  # it changes something
    others = [vocabulary_variant(vocabulary, [GOLD], kind, f"0:w{n}") for n in range(1, 4)]
    assert any(o != made for o in others)


def test_a_concept_a_gold_names_is_reclassified_so_its_class_and_domain_differ(
    vocabulary,
) -> None:
    assert named_concepts(vocabulary, [GOLD]) == {8507, 8532}  # MALE by id, FEMALE by code
    base = _by_id(vocabulary["concept"])
    assert base[8507]["concept_class_id"] == base[8507]["domain_id"]  # what a swap hides
    for n in range(6):
        made = _by_id(vocabulary_variant(vocabulary, [GOLD], "reclassified", f"0:w{n}")["concept"])
        for cid in (8507, 8532):
            before, after = base[cid], made[cid]
            assert after["concept_class_id"] != after["domain_id"]
            assert (after["standard_concept"], after["invalid_reason"]) != (
                before["standard_concept"],
                before["invalid_reason"],
            )
        # every class and domain it holds is one the vocabulary lists
        classes = set(vocabulary["concept_class"].column("concept_class_id").to_pylist())
        domains = set(vocabulary["domain"].column("domain_id").to_pylist())
        assert {r["concept_class_id"] for r in made.values()} <= classes
        assert {r["domain_id"] for r in made.values()} <= domains


def test_a_reclassified_concept_gets_a_synonym(vocabulary) -> None:
    made = vocabulary_variant(vocabulary, [GOLD], "reclassified", "0:w0")
    synonyms = made["concept_synonym"].to_pylist()
    assert {s["concept_id"] for s in synonyms} >= {8507, 8532}
    assert all(s["concept_synonym_name"].endswith("(synonym)") for s in synonyms)


def test_a_thinned_vocabulary_ties_its_class_counts_and_keeps_every_foreign_key(
    vocabulary,
) -> None:
    made = vocabulary_variant(vocabulary, [GOLD], "thinned", "0:w1")
    kept = set(made["concept"].column("concept_id").to_pylist())
    assert 0 < len(kept) < vocabulary["concept"].num_rows
    assert {8507, 8532} <= kept  # what a gold names stays
    for table, column in (
        ("domain", "domain_concept_id"),
        ("vocabulary", "vocabulary_concept_id"),
        ("concept_class", "concept_class_concept_id"),
    ):
        named = {v for v in made[table].column(column).to_pylist() if v is not None}
        assert named <= kept | (named - set(vocabulary["concept"].column("concept_id").to_pylist()))
    for table, columns in (
        ("concept_ancestor", ("ancestor_concept_id", "descendant_concept_id")),
        ("concept_relationship", ("concept_id_1", "concept_id_2")),
    ):
        for row in made[table].to_pylist():
            assert all(row[c] in kept for c in columns), (table, row)
    counts = Counter(
        (r["vocabulary_id"], r["concept_class_id"]) for r in made["concept"].to_pylist()
    )
    assert max(Counter(counts.values()).values()) > 1  # two classes hold as many concepts
    used = {c for _, c in counts}
    assert set(made["concept_class"].column("concept_class_id").to_pylist()) - used


def test_other_levels_of_separation_keep_the_least_at_most_the_greatest(vocabulary) -> None:
    made = vocabulary_variant(vocabulary, [GOLD], "levels", "0:w2")["concept_ancestor"]
    rows = made.to_pylist()
    assert all(r["min_levels_of_separation"] <= r["max_levels_of_separation"] for r in rows)
    itself = [r for r in rows if r["ancestor_concept_id"] == r["descendant_concept_id"]]
    assert any(r["max_levels_of_separation"] > 0 for r in itself)
    assert made.num_rows == vocabulary["concept_ancestor"].num_rows


def test_only_a_gold_naming_a_vocabulary_table_gets_vocabulary_variants() -> None:
    assert reads_vocabulary("SELECT c.concept_name FROM cdm.person p JOIN cdm.concept c ON 1=1")
    assert not reads_vocabulary("SELECT count(*) FROM cdm.person")
    assert not reads_vocabulary("SELECT FROM WHERE")  # unreadable: none
    with pytest.raises(ValueError, match="no vocabulary variant of kind"):
        vocabulary_variant({}, [], "renamed", "0")


CLASSES_GOLD = (
    "SELECT cc.concept_class_id, COUNT(*) AS concepts FROM cdm.concept_class AS cc "
    "JOIN cdm.concept AS c ON c.concept_class_id = cc.concept_class_id "
    "GROUP BY cc.concept_class_id ORDER BY concepts DESC, cc.concept_class_id LIMIT 10"
)


def _on(tables: dict[str, pa.Table], sql: str) -> list[tuple]:
    con = duckdb.connect(":memory:")
    try:
        con.execute("CREATE SCHEMA cdm")
        for name, table in tables.items():
            con.register(f"t_{name}", table)
            con.execute(f'CREATE TABLE cdm."{name}" AS SELECT * FROM t_{name}')
        return con.sql(sql).fetchall()
    finally:
        con.close()


def test_a_reclassified_vocabulary_gathers_classes_so_one_concept_and_none_tie(
    vocabulary,
) -> None:
    """The other concepts are gathered into three classes, so the ten classes with the most
    concepts reach classes of one concept, and keeping the classes without concepts (a
    LEFT JOIN counts each once) changes the list: the near miss of omop-314 that no other
    vocabulary tells apart."""
    left = CLASSES_GOLD.replace(" JOIN ", " LEFT JOIN ")
    tables = {t: vocabulary[t] for t in ("concept", "concept_class")}
    assert _on(tables, CLASSES_GOLD) == _on(tables, left)  # the shared vocabulary: alike
    told = 0
    for n in range(4):
        made = vocabulary_variant(vocabulary, [CLASSES_GOLD, GOLD], "reclassified", f"0:w{n}")
        concepts = made["concept"].to_pylist()
        assert len(concepts) == vocabulary["concept"].num_rows  # moved, none dropped
        sizes = Counter(r["concept_class_id"] for r in concepts)
        listed = set(made["concept_class"].column("concept_class_id").to_pylist())
        assert set(sizes) <= listed  # every class a concept names is listed
        assert 1 in sizes.values() and listed - set(sizes)  # classes of one, and of none
        assert sum(n for _, n in sizes.most_common(3)) > 0.8 * len(concepts)
        gathered = {"concept": made["concept"], "concept_class": made["concept_class"]}
        told += _on(gathered, CLASSES_GOLD) != _on(gathered, left)
    assert told >= 3
