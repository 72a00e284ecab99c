"""order_matters reads a top-level ORDER BY from the syntax tree, not the text."""

from __future__ import annotations

import pytest

from score.comparison.order_matters import order_matters


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t ORDER BY a",
        "select a from t order by a desc limit 3",
        "SELECT a FROM t ORDER BY ALL",
        "WITH c AS (SELECT a FROM t) SELECT a FROM c ORDER BY a",
        "SELECT a FROM t UNION SELECT b FROM u ORDER BY 1",
        "(SELECT a FROM t ORDER BY a)",
        "FROM t SELECT a ORDER BY a",
        "SELECT a FROM t\n-- a comment\nORDER\n  BY a;",
    ],
)
def test_a_top_level_order_by_counts(sql: str) -> None:
    assert order_matters(sql)


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a FROM t",
        "SELECT a, ROW_NUMBER() OVER (ORDER BY b) FROM t",
        "SELECT a, RANK() OVER (PARTITION BY c ORDER BY b) AS r FROM t",
        "SELECT string_agg(a, ',' ORDER BY a) FROM t",
        "SELECT * FROM (SELECT a FROM t ORDER BY a LIMIT 5) s",
        "WITH c AS (SELECT a FROM t ORDER BY a) SELECT count(*) FROM c",
        "SELECT a FROM t WHERE a IN (SELECT b FROM u ORDER BY b LIMIT 1)",
        "SELECT 'order by' AS label FROM t",
        'SELECT a AS "order by" FROM t',
    ],
)
def test_order_by_elsewhere_does_not(sql: str) -> None:
    assert not order_matters(sql)


def test_the_text_search_would_disagree() -> None:
    sql = "SELECT a, ROW_NUMBER() OVER (ORDER BY b) FROM t"
    assert "order by" in sql.lower() and not order_matters(sql)


def test_other_dialects() -> None:
    assert order_matters("SELECT TOP 5 a FROM t ORDER BY a", dialect="tsql")
    assert not order_matters("SELECT TOP 5 a FROM t", dialect="tsql")


@pytest.mark.parametrize("sql", ["SELECT a FROM t; SELECT b FROM u", "", "SELECT (((("])
def test_not_one_statement_is_an_error(sql: str) -> None:
    with pytest.raises(ValueError):
        order_matters(sql)
