"""Near misses bound to the vocabulary every variant keeps: named only where the base
vocabulary cannot tell them from their gold."""

from __future__ import annotations

import duckdb

from score.suite.vocabulary_bound import like_change, vocabulary_bound

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
