"""Logical-form exact match (seed 003): is the predicted SQL the gold SQL?

The seed's recipe is ``pred == gold`` on the raw strings (:func:`exact_text_match`), so
a trailing semicolon or a line break makes a right query "wrong".  sqlgold's
:func:`logical_form_match` compares the canonical form instead: both queries parsed by
sqlglot and generated again (keywords and function names upper-case, unquoted
identifiers lower-case, one space between tokens, ``AS`` spelled out, comments and the
trailing semicolon dropped).  Only formatting is forgiven: reordered conditions,
renamed aliases or a different but equivalent query still differ (that is what
execution accuracy is for).  Text that does not parse is compared with its whitespace
collapsed.

>>> logical_form_match("select  person_id from Person;", "SELECT person_id\\nFROM person")
True
>>> logical_form_match("SELECT a FROM t WHERE x = 'A'", "SELECT a FROM t WHERE x = 'a'")
False
>>> exact_text_match("SELECT 1;", "SELECT 1")
False
"""

from __future__ import annotations

import re
from functools import lru_cache

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from score.execution.guard import statements_of

#: Texts up to this length have their canonical form cached (a gold is normalised
#: once per language and run); longer ones are normalised each time, so the cache stays
#: small whatever a run's predictions hold.
CACHED_TEXT_CHARS = 8_000


def normalise_sql(sql: str, dialect: str = "duckdb") -> str:
    """The canonical text of ``sql`` (statements joined by ``'; '``); cached for short
    texts.  Text sqlglot cannot read (or that nests deeper than it can follow) is
    compared with its whitespace collapsed.

    >>> normalise_sql("select COUNT(*) c from T -- all rows\\n;")
    'SELECT COUNT(*) AS c FROM t'
    """
    if len(sql) <= CACHED_TEXT_CHARS:
        return _normalise_cached(sql, dialect)
    return _normalise(sql, dialect)


def _normalise(sql: str, dialect: str) -> str:
    try:
        statements = statements_of(sqlglot.parse(sql, read=dialect))
        return "; ".join(normalise_tree(s, dialect, copy=False) for s in statements)
    except (SqlglotError, RecursionError):
        return collapse_whitespace(sql)


_normalise_cached = lru_cache(maxsize=1024)(_normalise)


def collapse_whitespace(sql: str) -> str:
    """The text with runs of whitespace made one space and a trailing ``;`` dropped.

    >>> collapse_whitespace("SELECT  1 ;\\n")
    'SELECT 1'
    """
    return re.sub(r"\s+", " ", sql).strip().rstrip(";").strip()


def normalise_tree(tree: exp.Expr, dialect: str = "duckdb", *, copy: bool = True) -> str:
    """The canonical text of one parsed statement (what :func:`normalise_sql` gives).
    sqlglot's generator changes the tree it writes, so it writes a copy unless ``copy``
    is off (a tree nobody reads afterwards: the copy costs more than the writing).

    >>> normalise_tree(sqlglot.parse_one("select 1 as x -- note"))
    'SELECT 1 AS x'
    """
    return tree.sql(dialect=dialect, normalize=True, comments=False, copy=copy)


def logical_form_match(gold_sql: str, predicted_sql: str, dialect: str = "duckdb") -> bool:
    """Do the two queries have the same canonical text?"""
    return normalise_sql(gold_sql, dialect) == normalise_sql(predicted_sql, dialect)


def exact_text_match(gold_sql: str, predicted_sql: str) -> bool:
    """The seed's own rule: the strings are identical."""
    return gold_sql == predicted_sql
