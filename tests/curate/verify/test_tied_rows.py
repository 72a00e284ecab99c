"""Rows tied on a gold's ORDER BY (curate.verify.tied_rows) and the collation check that
leaves their order to the determinism rules (curate.verify.semantics.collation_drop),
on planted results: a stand-in for the case-insensitive run returns what each case needs."""

from __future__ import annotations

import pytest

from curate.verify.semantics import collation_drop
from curate.verify.tied_rows import compare_in_order, first_moved, in_tie_order, tie_groups
from score.execution.result import QueryError, QueryResult

WARNED = ("collation: groups or sorts text (concept_name); SQL Server ignores case there",)

#: A gold ordered by month: rows 1-3 tie on month 1, rows 4-5 on month 2.
GOLD = QueryResult.from_rows(
    ["name", "month", "n"],
    [("a", 1, 10), ("b", 1, 11), ("c", 1, 12), ("d", 2, 13), ("e", 2, 14), ("f", 3, 15)],
)
KEYS = QueryResult.from_rows(["_tie_k0"], [(1,), (1,), (1,), (2,), (2,), (3,)])


def rows(*order: int) -> QueryResult:
    """GOLD's rows in another order (1-based positions)."""
    found = GOLD.rows()
    return QueryResult.from_rows(list(GOLD.columns), [found[i - 1] for i in order])


class Planted:
    """The case-insensitive run, answering every query with one planted result."""

    def __init__(self, found: QueryResult | QueryError) -> None:
        self.found = found
        self.queries: list[str] = []

    def try_execute(self, sql: str) -> QueryResult | QueryError:
        self.queries.append(sql)
        return self.found


def check(other, keys=KEYS, *, order_matters=True, warnings=WARNED, deterministic=True):
    return collation_drop(
        "SELECT ...",
        warnings,
        GOLD,
        Planted(other),
        order_matters=order_matters,
        profile="sqlgold",
        order_keys=keys,
        deterministic=deterministic,
    )


def test_tie_groups_are_runs_of_equal_keys_nan_and_null_included():
    keys = QueryResult.from_rows(
        ["k", "j"],
        [(1, None), (1, None), (1, 0), (float("nan"), 2), (float("nan"), 2), (2, 2)],
    )
    assert tie_groups(keys) == [(0, 2), (2, 3), (3, 5), (5, 6)]
    assert tie_groups(QueryResult.from_rows(["k"], [])) == []


def test_in_tie_order_sorts_only_within_groups():
    shuffled = rows(3, 1, 2, 5, 4, 6)
    assert in_tie_order(shuffled, tie_groups(KEYS)).rows() == GOLD.rows()
    assert in_tie_order(GOLD, tie_groups(KEYS)) is GOLD  # already in that order
    # a row that left its group stays out of place
    assert in_tie_order(rows(4, 1, 2, 3, 5, 6), tie_groups(KEYS)).rows() != GOLD.rows()


def test_compare_in_order_forgives_tied_rows_only():
    assert compare_in_order(GOLD, rows(2, 3, 1, 5, 4, 6), KEYS, "sqlgold").match
    assert not compare_in_order(GOLD, rows(2, 3, 1, 5, 4, 6), None, "sqlgold").match
    assert not compare_in_order(GOLD, rows(1, 2, 4, 3, 5, 6), KEYS, "sqlgold").match
    assert not compare_in_order(GOLD, rows(1, 2, 3, 4, 5), KEYS, "sqlgold").match


def test_first_moved_names_the_first_row_out_of_place_ties_aside():
    moved = first_moved(GOLD, rows(2, 1, 3, 6, 4, 5), KEYS, "there")
    # the month-2 group holds d and f there: d is in place, e is not
    assert moved == "row 5 is ('e', 2, 14), and ('f', 3, 15) there"
    assert first_moved(GOLD, rows(2, 1, 3, 4, 5, 6), KEYS) is None


def test_tied_rows_in_another_order_are_left_to_the_determinism_rule():
    drop = check(rows(3, 2, 1, 5, 4, 6))
    assert drop is not None and drop.rule == "deterministic"
    assert "row 1 is ('a', 1, 10), and ('c', 1, 12) in that run" in drop.reason
    assert check(rows(3, 2, 1, 5, 4, 6), deterministic=False) is None
    assert check(GOLD) is None  # the very same order


def test_without_the_gold_s_keys_every_row_must_keep_its_place():
    drop = check(rows(3, 2, 1, 5, 4, 6), keys=None)
    assert drop is not None and drop.rule == "case_insensitive_collation"
    assert "same rows in another order (row 1 is ('a', 1, 10)" in drop.reason
    assert "ties" not in drop.reason


def test_a_row_moved_past_its_ties_drops_the_gold_saying_so():
    drop = check(rows(1, 2, 4, 3, 5, 6))
    assert drop is not None and drop.rule == "case_insensitive_collation"
    assert "same rows in another order" in drop.reason
    assert "row 3 is ('c', 1, 12), and ('d', 2, 13) under that collation" in drop.reason
    assert "rows its ORDER BY ties taken in any order" in drop.reason


@pytest.mark.parametrize(
    "other",
    [
        QueryResult.from_rows(list(GOLD.columns), GOLD.rows()[:5]),  # groups merged
        QueryResult.from_rows(list(GOLD.columns), [*GOLD.rows()[:5], ("F", 3, 15)]),
    ],
)
def test_other_rows_drop_the_gold_whatever_the_order(other):
    for order_matters in (True, False):
        drop = check(other, order_matters=order_matters)
        assert drop is not None and drop.rule == "case_insensitive_collation"
        assert "returns other rows" in drop.reason and "another order" not in drop.reason


def test_an_unordered_gold_is_compared_as_a_multiset():
    assert check(rows(6, 5, 4, 3, 2, 1), keys=None, order_matters=False) is None


def test_a_gold_failing_under_the_collation_is_dropped_and_one_not_warned_is_not_run():
    drop = check(QueryError("binder_error", "no such function"))
    assert drop is not None and "fails (binder_error: no such function)" in drop.reason
    unwarned = Planted(rows(6, 5, 4, 3, 2, 1))
    verdict = collation_drop("SELECT 1", (), GOLD, unwarned, order_matters=True, profile="sqlgold")
    assert verdict is None
    assert unwarned.queries == []
