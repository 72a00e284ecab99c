"""Tiers and features of gold queries: every tier path and every feature."""

from __future__ import annotations

import json

import pytest

import curate.tasks.tiers as tiers
from curate.tasks.tiers import TierError, classify_tier, extract_features


@pytest.mark.parametrize(
    ("sql", "tier"),
    [
        ("SELECT COUNT(*) FROM cdm.person", "simple"),
        ("SELECT gender_concept_id, COUNT(*) FROM cdm.person GROUP BY 1 ORDER BY 2 DESC", "simple"),
        (
            "SELECT DISTINCT year_of_birth FROM cdm.person WHERE year_of_birth > 1950 LIMIT 5",
            "simple",
        ),
        ("SELECT CASE WHEN x > 1 THEN 'a' END FROM cdm.measurement", "simple"),
        ("SELECT 1", "simple"),
        (
            "SELECT * FROM cdm.person p JOIN cdm.death d ON d.person_id = p.person_id",
            "compositional",
        ),
        ("SELECT * FROM cdm.person, cdm.death", "compositional"),
        (
            "SELECT * FROM cdm.person WHERE person_id IN (SELECT person_id FROM cdm.death)",
            "compositional",
        ),
        ("SELECT * FROM cdm.person WHERE EXISTS (SELECT 1 FROM cdm.death)", "compositional"),
        ("SELECT (SELECT MAX(year_of_birth) FROM cdm.person) AS m", "compositional"),
        ("SELECT * FROM (SELECT person_id FROM cdm.person) AS t", "compositional"),
        ("WITH t AS (SELECT person_id FROM cdm.person) SELECT * FROM t", "compositional"),
        ("SELECT person_id, RANK() OVER (ORDER BY year_of_birth) FROM cdm.person", "compositional"),
        ("SELECT person_id FROM cdm.person UNION SELECT person_id FROM cdm.death", "compositional"),
        (
            "SELECT person_id FROM cdm.person EXCEPT SELECT person_id FROM cdm.death",
            "compositional",
        ),
        ("SELECT concept_name FROM cdm.concept WHERE concept_id = 8507", "schema_aware"),
        (
            "SELECT COUNT(*) FROM cdm.condition_occurrence co JOIN cdm.concept_ancestor ca "
            "ON ca.descendant_concept_id = co.condition_concept_id",
            "schema_aware",
        ),
        (
            "SELECT * FROM cdm.drug_exposure WHERE drug_concept_id IN "
            "(SELECT concept_id_2 FROM cdm.concept_relationship)",
            "schema_aware",
        ),
        ("SELECT * FROM vocabulary", "schema_aware"),
        ("SELECT * FROM cdm.source_to_concept_map", "schema_aware"),
        ("SELECT * FROM cdm.drug_strength", "schema_aware"),
        ("WITH concept AS (SELECT 1 AS concept_id) SELECT * FROM concept", "compositional"),
        ("WITH c AS (SELECT * FROM cdm.concept) SELECT * FROM c", "schema_aware"),
    ],
)
def test_tier(sql: str, tier: str) -> None:
    assert classify_tier(sql) == tier


def test_every_vocabulary_table_makes_a_query_schema_aware() -> None:
    for table in sorted(tiers.VOCABULARY_TABLES):
        assert classify_tier(f"SELECT * FROM cdm.{table}") == "schema_aware", table


def test_tier_of_sql_server_text() -> None:
    assert classify_tier("SELECT TOP 5 * FROM [dbo].[concept]", dialect="tsql") == "schema_aware"


FEATURE_SQL = """
WITH ages AS (
    SELECT p.person_id, 2020 - p.year_of_birth AS age
    FROM cdm.person AS p
    JOIN cdm.observation_period AS op ON op.person_id = p.person_id
)
SELECT c.concept_name,
       COUNT(DISTINCT a.person_id) AS persons,
       AVG(a.age) AS mean_age,
       ROW_NUMBER() OVER (ORDER BY COUNT(*) DESC) AS rn
FROM ages AS a
JOIN cdm.condition_occurrence AS co ON co.person_id = a.person_id
JOIN cdm.concept AS c ON c.concept_id = co.condition_concept_id
WHERE co.condition_concept_id IN (
    SELECT descendant_concept_id FROM cdm.concept_ancestor
    WHERE ancestor_concept_id = (SELECT MIN(concept_id) FROM cdm.concept)
)
GROUP BY c.concept_name
UNION ALL
SELECT 'none', 0, 0, 0
ORDER BY persons DESC
LIMIT 10
"""


def test_features_of_a_rich_query() -> None:
    features = extract_features(FEATURE_SQL)
    assert features == {
        "tables": [
            "concept",
            "concept_ancestor",
            "condition_occurrence",
            "observation_period",
            "person",
        ],
        "join_count": 3,
        "aggregates": ["avg", "count", "min"],
        "window_functions": 1,
        "set_operations": ["union all"],
        "subqueries": 2,
        "ctes": 1,
        "nesting_depth": 2,
        "has_order_by": True,
        "has_limit": True,
        "has_distinct": True,
        "has_group_by": True,
    }
    assert json.loads(json.dumps(features)) == features


def test_features_of_a_flat_query() -> None:
    assert extract_features("SELECT person_id FROM cdm.person") == {
        "tables": ["person"],
        "join_count": 0,
        "aggregates": [],
        "window_functions": 0,
        "set_operations": [],
        "subqueries": 0,
        "ctes": 0,
        "nesting_depth": 0,
        "has_order_by": False,
        "has_limit": False,
        "has_distinct": False,
        "has_group_by": False,
    }


@pytest.mark.parametrize(
    ("sql", "key", "value"),
    [
        ("WITH person AS (SELECT 1 AS x) SELECT * FROM person", "tables", []),
        (
            "WITH x AS (SELECT * FROM cdm.person) SELECT * FROM x JOIN cdm.death USING (person_id)",
            "tables",
            ["death", "person"],
        ),
        ("SELECT * FROM Person", "tables", ["person"]),
        ("SELECT * FROM range(3)", "tables", []),
        ("SELECT * FROM a LEFT JOIN b ON a.x = b.x CROSS JOIN c", "join_count", 2),
        ("SELECT STRING_AGG(x, ',') , MAX(x), max(y) FROM t", "aggregates", ["max", "string_agg"]),
        (
            "SELECT SUM(x) OVER (PARTITION BY y), LAG(x) OVER (ORDER BY y) FROM t",
            "window_functions",
            2,
        ),
        ("SELECT SUM(x) OVER () FROM t", "aggregates", []),
        ("SELECT 1 INTERSECT SELECT 1 UNION SELECT 2", "set_operations", ["intersect", "union"]),
        ("(SELECT 1) UNION ALL (SELECT 2)", "subqueries", 0),
        ("SELECT * FROM (SELECT 1 UNION SELECT 2) t", "subqueries", 1),
        ("WITH a AS (SELECT 1), b AS (SELECT * FROM a) SELECT * FROM b", "ctes", 2),
        ("WITH a AS (SELECT 1) SELECT * FROM a", "subqueries", 0),
        ("WITH a AS (SELECT 1) SELECT * FROM a", "nesting_depth", 1),
        (
            "SELECT * FROM t WHERE x IN (SELECT y FROM u WHERE z IN (SELECT z FROM v))",
            "nesting_depth",
            2,
        ),
        ("SELECT 1 UNION SELECT 2", "nesting_depth", 0),
        ("SELECT x FROM t ORDER BY x", "has_order_by", True),
        ("SELECT ROW_NUMBER() OVER (ORDER BY x) FROM t", "has_order_by", False),
        ("SELECT * FROM (SELECT x FROM t ORDER BY x LIMIT 1) s", "has_order_by", True),
        ("SELECT x FROM t LIMIT 1", "has_limit", True),
        ("SELECT x FROM t OFFSET 1 ROWS FETCH NEXT 2 ROWS ONLY", "has_limit", True),
        ("SELECT x FROM t", "has_limit", False),
        ("SELECT DISTINCT x FROM t", "has_distinct", True),
        ("SELECT COUNT(DISTINCT x) FROM t", "has_distinct", True),
        ("SELECT x FROM t UNION SELECT x FROM u", "has_distinct", False),
        ("SELECT x, COUNT(*) FROM t GROUP BY x", "has_group_by", True),
        ("SELECT COUNT(*) FROM t", "has_group_by", False),
    ],
)
def test_feature(sql: str, key: str, value) -> None:
    assert extract_features(sql)[key] == value


def test_parsed_trees_are_accepted() -> None:
    tree = tiers.parse_gold("SELECT * FROM cdm.concept")
    assert classify_tier(tree) == "schema_aware"
    assert extract_features(tree)["tables"] == ["concept"]


@pytest.mark.parametrize("sql", ["SELECT FROM WHERE (", "SELECT 1; SELECT 2"])
def test_unreadable_gold_sql_is_a_tier_error(sql: str) -> None:
    with pytest.raises(TierError) as raised:
        classify_tier(sql)
    assert raised.value.stage == "tiers"
