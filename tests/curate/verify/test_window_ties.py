"""Rule window_order_ties: rankings over ties, decided on the real database."""

from __future__ import annotations

import doctest
import json

import pytest
import sqlglot

from curate.ohdsi.render import render_record
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import transpile
from curate.verify import window_ties
from curate.verify.gold import Drop, run_gold
from curate.verify.reference_rules import ReferenceRules
from score.execution.result import QueryResult

# Three people's visits: two share person 1's first date, so ordering by date ties there.
VISITS = """(VALUES (1, DATE '2020-01-01', 'a'), (1, DATE '2020-01-01', 'b'),
                     (1, DATE '2020-02-01', 'c'), (2, DATE '2020-03-01', 'd'),
                     (3, DATE '2020-04-01', 'e')) AS v(person_id, d, code)"""


def gold(sql: str, executor, **rules):
    run = run_gold(sql, executor, ReferenceRules(**rules), order_matters=False, profile="sqlgold")
    return run if isinstance(run, Drop) else run.result


def test_docstring_examples_run():
    assert doctest.testmod(window_ties, optionflags=doctest.NORMALIZE_WHITESPACE).failed == 0


@pytest.mark.parametrize(
    "function",
    [
        "ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY d)",
        "NTILE(2) OVER (ORDER BY d)",
        "LAG(code) OVER (ORDER BY d)",
        "LEAD(code, 1) OVER (PARTITION BY person_id ORDER BY d)",
        "FIRST_VALUE(code) OVER (PARTITION BY person_id ORDER BY d)",
        "LAST_VALUE(code) OVER (ORDER BY d)",
        "SUM(person_id) OVER (ORDER BY d ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)",
    ],
)
def test_tie_sensitive_windows_are_found(function):
    tree = sqlglot.parse_one(f"SELECT {function} FROM {VISITS}", read="duckdb")
    assert len(window_ties.rankings(tree)) == 1


@pytest.mark.parametrize(
    "function",
    [
        "RANK() OVER (PARTITION BY person_id ORDER BY d)",
        "DENSE_RANK() OVER (ORDER BY d)",
        "PERCENT_RANK() OVER (ORDER BY d)",
        "CUME_DIST() OVER (ORDER BY d)",
        "SUM(person_id) OVER (ORDER BY d)",
        "COUNT(*) OVER (PARTITION BY person_id)",
    ],
)
def test_rankings_that_give_ties_one_value_are_not(function):
    tree = sqlglot.parse_one(f"SELECT {function} FROM {VISITS}", read="duckdb")
    assert window_ties.rankings(tree) == []


def test_ordered_string_aggregates_are_rankings():
    tree = sqlglot.parse_one(
        f"SELECT person_id, STRING_AGG(code, ',' ORDER BY d) FROM {VISITS} GROUP BY person_id",
        read="duckdb",
    )
    (ranking,) = window_ties.rankings(tree)
    assert [k.sql() for k in ranking.keys] == ["person_id", "d"]


def test_grouping_keys_among_the_ranking_keys_prove_the_order_total():
    tree = sqlglot.parse_one(
        f"SELECT person_id, d, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY d) "
        f"FROM {VISITS} GROUP BY person_id, d",
        read="duckdb",
    )
    assert window_ties.proven_total(window_ties.rankings(tree)[0])
    tree = sqlglot.parse_one(
        f"SELECT person_id, d, ROW_NUMBER() OVER (ORDER BY d) FROM {VISITS} GROUP BY person_id, d",
        read="duckdb",
    )
    assert not window_ties.proven_total(window_ties.rankings(tree)[0])


def test_a_first_row_picked_among_ties_is_dropped(executor):
    sql = f"""SELECT person_id, code FROM (
                SELECT person_id, code, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY d) AS rn
                FROM {VISITS}) AS r WHERE rn = 1"""
    dropped = gold(sql, executor)
    assert isinstance(dropped, Drop) and dropped.rule == "window_order_ties"
    assert "ROW_NUMBER ordered by person_id, d" in dropped.reason
    assert "(1, datetime.date(2020, 1, 1))" in dropped.reason
    kept = gold(sql, executor, window_order_ties=False)
    assert isinstance(kept, QueryResult)


def test_a_neighbour_among_ties_is_dropped(executor):
    sql = f"SELECT code, LAG(code) OVER (ORDER BY d) AS before FROM {VISITS}"
    dropped = gold(sql, executor)
    assert isinstance(dropped, Drop) and dropped.rule == "window_order_ties"


def test_an_ordered_concatenation_over_ties_is_dropped(executor):
    sql = f"SELECT person_id, STRING_AGG(code, ',' ORDER BY d) AS codes FROM {VISITS} GROUP BY 1"
    dropped = gold(sql, executor)
    assert isinstance(dropped, Drop) and dropped.rule == "window_order_ties"


def test_a_total_order_is_kept(executor):
    sql = f"""SELECT person_id, code FROM (
                SELECT person_id, code,
                       ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY d, code) AS rn
                FROM {VISITS}) AS r WHERE rn = 1"""
    assert isinstance(gold(sql, executor), QueryResult)


def test_ties_between_identical_rows_change_nothing(executor):
    sql = f"""SELECT person_id, d, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY d) AS rn
              FROM {VISITS}"""  # tied rows differ only in code, which nothing reads
    assert isinstance(gold(sql, executor), QueryResult)


def test_ties_the_query_above_never_looks_at_are_kept(executor):
    """Numbers assigned across partitions, compared only within one (Achilles' pattern)."""
    sql = f"""WITH s AS (SELECT person_id, d, COUNT(*) AS n,
                                ROW_NUMBER() OVER (ORDER BY d) AS rn
                         FROM {VISITS} GROUP BY person_id, d)
              SELECT a.person_id, a.d, SUM(b.n) AS running
              FROM s AS a JOIN s AS b ON a.person_id = b.person_id AND b.rn <= a.rn
              GROUP BY a.person_id, a.d"""
    assert isinstance(gold(sql, executor), QueryResult)


def test_a_named_window_cannot_be_checked_and_is_dropped(executor):
    sql = f"SELECT code, ROW_NUMBER() OVER w AS rn FROM {VISITS} WINDOW w AS (ORDER BY d)"
    dropped = gold(sql, executor)
    assert isinstance(dropped, Drop) and "could not be checked" in dropped.reason


def _achilles(shared_dir, number: int) -> str:
    path = shared_dir / "corpora" / "achilles.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        record = SourceRecord.from_dict(json.loads(line))
        if record.id == f"achilles/{number}.sql":
            rendered, _ = render_record(record)
            return transpile(rendered.gold_sql, read="tsql").sql
    raise AssertionError(number)


@pytest.mark.parametrize("number", [624, 824, 1824])
def test_achilles_top_ten_co_occurrences_rank_over_ties(shared_dir, executor, number):
    """Analyses 624, 824 and 1824 number concept pairs by people and cases, which tie."""
    dropped = gold(_achilles(shared_dir, number), executor, max_rows=100_000)
    assert isinstance(dropped, Drop) and dropped.rule == "window_order_ties", dropped
    assert "num_people, num_cases" in dropped.reason


@pytest.mark.parametrize("number", [106, 403, 1815])
def test_achilles_distributions_number_rows_whose_ties_do_not_matter(shared_dir, executor, number):
    """Distribution analyses number rows to find percentiles: kept."""
    kept = gold(_achilles(shared_dir, number), executor, max_rows=100_000)
    assert isinstance(kept, QueryResult), kept
