"""diff_results: the column links by content and the missing / extra rows."""

from __future__ import annotations

import pyarrow as pa

from score.comparison.result_diff import diff_results
from score.comparison.values import Tolerance
from score.execution.result import QueryResult


def q(names: str, *rows: tuple) -> QueryResult:
    return QueryResult.from_rows(names.split(), rows)


def test_equal_results_link_every_column_and_list_no_rows() -> None:
    d = diff_results(q("a b", (1, "x"), (2, "y")), q("b a", ("y", 2), ("x", 1)))
    assert d.match and not d.missing_count and not d.extra_count
    assert [(link.gold, link.pred, link.how) for link in d.links] == [
        (0, 1, "same"),
        (1, 0, "same"),
    ]
    assert d.render().startswith("results match: ")


def test_a_renamed_column_is_noted() -> None:
    d = diff_results(q("person_id", (1,), (2,)), q("id", (2,), (1,)))
    assert d.match and d.links[0].how == "renamed" and d.links[0].pred_name == "id"
    assert "same values, another name" in d.render()


def test_missing_and_extra_rows_with_counts_and_a_limit() -> None:
    gold = q("n", *[(i,) for i in range(30)])
    pred = q("n", *[(i,) for i in range(5, 35)])
    d = diff_results(gold, pred, limit=3)
    assert not d.match
    assert (d.missing_count, d.extra_count) == (5, 5)
    assert d.missing == [(0,), (1,), (2,)] and d.extra == [(30,), (31,), (32,)]
    text = d.render()
    assert "5 gold row(s) missing from the prediction (first 3):" in text
    assert "5 predicted row(s) not in gold (first 3):" in text


def test_duplicates_count() -> None:
    d = diff_results(q("n", (1,), (1,), (2,)), q("n", (1,), (2,), (2,)))
    assert (d.missing, d.extra) == ([(1,)], [(2,)])


def test_rows_within_the_tolerance_are_not_listed() -> None:
    gold = q("k v", ("a", 0.3), ("b", 1.0), ("c", 2.0))
    pred = q("k v", ("a", 0.1 + 0.2), ("b", 1.0), ("c", 2.5))
    d = diff_results(gold, pred)
    assert d.missing == [("c", 2.0)] and d.extra == [("c", 2.5)]
    loose = diff_results(gold, pred, tolerance=Tolerance(rel=0.5, abs=0.0))
    assert loose.match


def test_a_column_with_other_values_gets_a_partial_stand_in() -> None:
    gold = q("id name", (1, "a"), (2, "b"), (3, "c"))
    pred = q("id label", (1, "a"), (2, "B"), (3, "c"))
    link = diff_results(gold, pred).links[1]
    assert (link.how, link.pred_name, link.common) == ("partial", "label", 2)


def test_a_column_nothing_resembles_is_unlinked_and_extra_columns_are_listed() -> None:
    gold = q("id name", (1, "a"), (2, "b"))
    pred = QueryResult.from_arrow(
        pa.table({"id": [1, 2], "when": pa.array([None, None], pa.date32()), "z": [7, 8]})
    )
    d = diff_results(gold, pred)
    assert d.links[0].how == "same"
    assert d.links[1].how == "none" and d.links[1].pred is None
    assert d.unused == [(1, "when"), (2, "z")]
    assert "none (no predicted column holds these values)" in d.render()
    assert "predicted columns not used: 2 'when', 3 'z'" in d.render()


def test_same_rows_in_another_order_name_the_first_difference() -> None:
    gold = q("n", (1,), (2,), (3,))
    pred = q("n", (1,), (3,), (2,))
    assert diff_results(gold, pred).match
    d = diff_results(gold, pred, order_matters=True)
    assert not d.match and d.out_of_order == (1, (3,), (2,))
    assert "first difference at row 2: predicted (3) vs gold (2)" in d.render()


def test_different_row_counts() -> None:
    d = diff_results(q("n", (1,), (2,)), q("n", (1,)))
    assert (d.gold_rows, d.pred_rows, d.missing, d.extra_count) == (2, 1, [(2,)], 0)


def test_a_verdict_the_caller_has_gives_the_same_diff() -> None:
    """The scorer passes the sqlgold verdict it already has (the page's preview)."""
    from score.comparison.compare import compare

    gold = QueryResult.from_rows(["n", "name"], [(1, "a"), (2, "b"), (3, "c")])
    pred = QueryResult.from_rows(["n", "label", "x"], [(1, "a", 0), (2, "B", 0), (4, "c", 0)])
    verdict = compare(gold, pred, "sqlgold")
    assert diff_results(gold, pred, verdict=verdict) == diff_results(gold, pred)


def test_the_column_matching_is_a_maximum_one_as_the_solver_finds():
    """Without scipy's solver (the Hungarian algorithm in plain Python), the matching of
    gold to predicted columns has the weight scipy's finds (as many links as possible,
    then as many in place), on random cases."""
    import random

    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from score.comparison.result_diff import _matching

    rng = random.Random(3)
    for _ in range(800):
        n_gold, n_pred = rng.randint(1, 9), rng.randint(1, 24)
        cands = [[j for j in range(n_pred) if rng.random() < 0.5] for _ in range(n_gold)]
        weight = np.zeros((n_gold, n_pred))
        for i, c in enumerate(cands):
            for j in c:
                weight[i, j] = 1000.0 + (i == j)
        rows, cols = linear_sum_assignment(weight, maximize=True)
        best = sum(weight[i, j] for i, j in zip(rows, cols, strict=True))
        found = _matching(cands, n_pred)
        assert all(j in cands[i] for i, j in found.items())
        assert len(set(found.values())) == len(found)
        assert sum(weight[i, j] for i, j in found.items()) == best, cands


def test_the_assignment_has_the_solver_s_weight_on_random_matrices():
    import random

    import numpy as np
    from scipy.optimize import linear_sum_assignment

    from score.comparison.result_diff import max_weight_assignment

    rng = random.Random(5)
    for _ in range(300):
        n, m = rng.randint(1, 8), rng.randint(1, 8)
        weight = [[float(rng.randint(0, 9)) for _ in range(m)] for _ in range(n)]
        rows, cols = linear_sum_assignment(np.array(weight), maximize=True)
        found = max_weight_assignment(weight)
        assert len(found) == min(n, m) and len(set(found.values())) == len(found)
        assert sum(weight[i][j] for i, j in found.items()) == sum(
            weight[i][j] for i, j in zip(rows, cols, strict=True)
        )
