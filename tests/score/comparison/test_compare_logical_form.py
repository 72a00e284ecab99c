"""Logical-form exact match on canonical SQL text (seed 003)."""

from __future__ import annotations

import pytest

from score.comparison.profiles.logical_form import (
    exact_text_match,
    logical_form_match,
    normalise_sql,
)


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ("SELECT a FROM t", "select a from t;"),
        ("SELECT a FROM t", "SELECT   a\n  FROM t  -- why not\n"),
        ("SELECT COUNT(*) AS n FROM person", "select count(*) n from PERSON"),
        ("SELECT a FROM t WHERE b IN (1, 2)", "SELECT a FROM t WHERE b IN (1,2)"),
        ("SELECT (a + 1) * 2 FROM t", "SELECT (a+1)*2 FROM t"),
    ],
)
def test_formatting_is_forgiven(gold: str, pred: str) -> None:
    assert logical_form_match(gold, pred)
    assert not exact_text_match(gold, pred)


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        ("SELECT a FROM t WHERE x = 'A'", "SELECT a FROM t WHERE x = 'a'"),
        ("SELECT a FROM t WHERE x = 1 AND y = 2", "SELECT a FROM t WHERE y = 2 AND x = 1"),
        ("SELECT a AS n FROM t", "SELECT a AS m FROM t"),
        ("SELECT a FROM t", "SELECT DISTINCT a FROM t"),
        ("SELECT a FROM t ORDER BY a", "SELECT a FROM t"),
    ],
)
def test_anything_else_still_differs(gold: str, pred: str) -> None:
    assert not logical_form_match(gold, pred)


def test_unparseable_text_is_compared_with_whitespace_collapsed() -> None:
    assert logical_form_match("SELECT FROM WHERE ((", "SELECT  FROM\nWHERE ((;")
    assert normalise_sql("not sql at all ((") == "not sql at all (("


def test_exact_text_match_is_string_equality() -> None:
    assert exact_text_match("SELECT 1", "SELECT 1")
    assert not exact_text_match("SELECT 1", "select 1")


def test_dialects() -> None:
    assert logical_form_match("SELECT TOP 1 a FROM t", "select top 1 a from T", dialect="tsql")
