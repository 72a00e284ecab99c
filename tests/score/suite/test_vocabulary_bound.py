"""Near misses bound to the vocabulary every variant shares: named only where the base
vocabulary cannot tell them from their gold."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from score.suite.vocabulary_bound import filter_change, like_change, vocabulary_bound

GOLD = (
    "SELECT COUNT(DISTINCT co.person_id) FROM cdm.condition_occurrence co "
    "JOIN cdm.concept c ON c.concept_id = co.condition_concept_id "
    "WHERE LOWER(c.concept_name) LIKE '{}'"
)


def test_a_like_on_the_vocabulary_that_selects_the_same_concepts(omop_db):
    con = duckdb.connect(str(omop_db), read_only=True)
    try:
        differ = con.execute(
            "SELECT count(*) FROM cdm.concept WHERE "
            "(lower(concept_name) LIKE '%biopsy%') <> (lower(concept_name) LIKE '%biops%')"
        ).fetchall()[0][0]
    finally:
        con.close()
    assert differ == 0  # the embedded vocabulary has no 'biops' that is not 'biopsy'
    pairs = [
        (GOLD.format("%biopsy%"), GOLD.format("%biops%")),
        (GOLD.format("%fracture%"), GOLD.format("fracture%")),  # 'Closed fracture of ...'
        (
            "SELECT concept_name FROM cdm.concept WHERE concept_id = 4249893",
            "SELECT concept_name FROM cdm.concept WHERE concept_id <> 4249893",
        ),
        (  # a LIKE on a clinical column: variants make its rows
            "SELECT COUNT(*) FROM cdm.person WHERE person_source_value LIKE 'a%'",
            "SELECT COUNT(*) FROM cdm.person WHERE person_source_value LIKE 'a'",
        ),
    ]
    assert vocabulary_bound(omop_db, None, pairs) == [True, False, True, False]


def test_only_a_lone_pattern_change_on_a_vocabulary_table():
    assert like_change(GOLD.format("%biopsy%"), GOLD.format("%biops%")) == (
        "concept",
        "LOWER(concept_name) LIKE $1",
        "%biopsy%",
        "%biops%",
    )
    # something else changed too
    other = GOLD.format("%biops%").replace("COUNT(DISTINCT", "COUNT(")
    assert like_change(GOLD.format("%biopsy%"), other) is None
    # the LIKE is on a column of the clinical table
    assert (
        like_change(
            "SELECT 1 FROM cdm.observation o WHERE o.value_as_string LIKE 'pos%'",
            "SELECT 1 FROM cdm.observation o WHERE o.value_as_string LIKE 'pos'",
        )
        is None
    )


JOINED = (
    "SELECT COUNT(DISTINCT co.person_id) FROM cdm.condition_occurrence co "
    "JOIN cdm.concept c ON c.concept_id = co.condition_concept_id WHERE {}"
)


def test_a_changed_filter_on_a_vocabulary_table_that_keeps_the_same_rows(omop_db):
    # the filter on the vocabulary table alone only chooses its rows; on the embedded
    # vocabulary (every variant's), some choose the same rows and some do not
    pairs = [
        (  # the one concept with this code is SNOMED's: the vocabulary test adds nothing
            JOINED.format("c.vocabulary_id = 'SNOMED' AND c.concept_code = '38341003'"),
            JOINED.format("c.concept_code = '38341003'"),
        ),
        (  # concepts whose name holds an 'a' are in many domains
            JOINED.format("c.domain_id = 'Condition' AND LOWER(c.concept_name) LIKE '%a%'"),
            JOINED.format("LOWER(c.concept_name) LIKE '%a%'"),
        ),
        (  # a column swapped: 201826 has no descendant here but itself
            "SELECT COUNT(*) FROM cdm.condition_era ce JOIN cdm.concept_ancestor ca "
            "ON ca.descendant_concept_id = ce.condition_concept_id "
            "WHERE ca.ancestor_concept_id = 201826",
            "SELECT COUNT(*) FROM cdm.condition_era ce JOIN cdm.concept_ancestor ca "
            "ON ca.descendant_concept_id = ce.condition_concept_id "
            "WHERE ca.descendant_concept_id = 201826",
        ),
    ]
    assert all(filter_change(*pair) is not None for pair in pairs)  # each is a filter change
    assert vocabulary_bound(omop_db, None, pairs) == [True, False, True]


def test_only_a_filter_that_chooses_the_vocabulary_tables_rows_is_taken_for_one():
    gold = JOINED.format("c.vocabulary_id = 'SNOMED' AND c.concept_code = '1'")
    assert filter_change(gold, JOINED.format("c.concept_code = '1'")) is not None
    refused = [
        # the WHERE reads the nullable side of a LEFT JOIN: it also drops unmatched rows
        (
            gold.replace("JOIN cdm.concept", "LEFT JOIN cdm.concept"),
            JOINED.format("c.concept_code = '1'").replace(
                "JOIN cdm.concept", "LEFT JOIN cdm.concept"
            ),
        ),
        # a filter on the clinical table
        (JOINED.format("co.condition_type_concept_id = 1"), JOINED.format("TRUE")),
        # a condition across both tables
        (
            JOINED.format("co.condition_concept_id = c.concept_id AND c.concept_code = '1'"),
            JOINED.format("c.concept_code = '1'"),
        ),
        # something else changed too
        (gold, JOINED.format("c.concept_code = '1'").replace("DISTINCT ", "")),
        # the concept table is a CTE of clinical rows here
        (
            "WITH concept AS (SELECT condition_concept_id AS concept_id FROM "
            "cdm.condition_occurrence) SELECT COUNT(*) FROM concept WHERE concept_id = 1",
            "WITH concept AS (SELECT condition_concept_id AS concept_id FROM "
            "cdm.condition_occurrence) SELECT COUNT(*) FROM concept WHERE concept_id = 2",
        ),
    ]
    for one, two in refused:
        assert filter_change(one, two) is None, two
    # a LEFT JOIN's own ON chooses its table's rows before the join
    left = (
        "SELECT COUNT(c.concept_id) FROM cdm.condition_occurrence co LEFT JOIN cdm.concept c "
        "ON c.concept_id = co.condition_concept_id AND {}"
    )
    found = filter_change(
        left.format("c.vocabulary_id = 'SNOMED'"), left.format("c.vocabulary_id = 'X'")
    )
    assert found == ("concept", "c", "(c.vocabulary_id = 'SNOMED')", "(c.vocabulary_id = 'X')")


def test_bound_is_judged_on_the_vocabulary_the_variants_share(omop_db):
    """A local concept named 'biops' is a row the LIKE near miss selects and the gold
    does not: with it in the shared vocabulary, the near miss is not bound."""
    con = duckdb.connect(str(omop_db), read_only=True)
    try:
        tables = {
            t: con.sql(f"SELECT * FROM cdm.{t}").to_arrow_table()
            for t in ("concept", "concept_ancestor")
        }
    finally:
        con.close()
    pair = [(GOLD.format("%biopsy%"), GOLD.format("%biops%"))]
    assert vocabulary_bound(omop_db, None, pair, tables) == [True]
    local = tables["concept"].slice(0, 1).to_pylist()[0] | {
        "concept_id": 2_000_000_001,
        "concept_name": "biops",
    }
    tables["concept"] = pa.concat_tables(
        [tables["concept"], pa.Table.from_pylist([local], schema=tables["concept"].schema)]
    )
    assert vocabulary_bound(omop_db, None, pair, tables) == [False]
