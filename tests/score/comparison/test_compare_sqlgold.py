"""The default ``sqlgold`` profile: the choices its module documents, its reasons, the
column-mapping search, the tolerance, and agreement with a brute-force definition."""

from __future__ import annotations

import datetime as dt
import itertools
import math
import random
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from score.comparison.compare import Tolerance, compare
from score.comparison.profiles.bijective import compare_bijective
from score.comparison.profiles.column_checks import Engine
from score.comparison.profiles.sqlgold import RULES
from score.execution.result import QueryResult

ARROW = {
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "FLOAT": pa.float32(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
    "TIMESTAMPTZ": pa.timestamp("us", tz="UTC"),
    "DECIMAL(18,3)": pa.decimal128(18, 3),
    "INTEGER[]": pa.list_(pa.int32()),
    "DOUBLE[]": pa.list_(pa.float64()),
}


def r(types: str, *rows: tuple, names: str | None = None) -> QueryResult:
    kinds = types.split()
    cols = names.split() if names else [f"c{i + 1}" for i in range(len(kinds))]
    arrays = [pa.array([row[i] for row in rows], ARROW[t]) for i, t in enumerate(kinds)]
    table = pa.Table.from_arrays(arrays, names=cols) if kinds else pa.table({})
    return QueryResult.from_arrow(table, types=kinds)


def match(gold, pred, **kw) -> bool:
    return compare(gold, pred, **kw).match


# -- documented value choices -------------------------------------------------------


def test_integers_compare_exactly_but_doubles_within_the_tolerance() -> None:
    assert not match(r("BIGINT", (1_000_000,)), r("BIGINT", (1_000_001,)))
    assert match(r("DOUBLE", (1_000_000.0,)), r("DOUBLE", (1_000_000.5,)))
    assert not match(r("DOUBLE", (1_000_000.0,)), r("DOUBLE", (1_000_002.0,)))
    assert not match(r("BIGINT", (2**53 + 1,)), r("BIGINT", (2**53,)))


def test_the_tolerance_is_configurable() -> None:
    gold, pred = r("DOUBLE", (10.0,)), r("DOUBLE", (9.999,))
    assert not match(gold, pred)
    assert match(gold, pred, tolerance=Tolerance(rel=1e-3, abs=0.0))
    assert match(gold, pred, tolerance=(0.0, 0.01))
    assert not match(r("DOUBLE", (1e-10,)), r("DOUBLE", (2e-10,)), tolerance=(0.0, 0.0))
    assert match(r("DOUBLE", (1e-10,)), r("DOUBLE", (2e-10,)))  # within abs 1e-9
    with pytest.raises(ValueError):
        Tolerance(rel=-1)


def test_null_is_its_own_value() -> None:
    assert match(r("INTEGER", (None,), (1,)), r("DOUBLE", (1.0,), (None,)))
    assert not match(r("DOUBLE", (None,)), r("DOUBLE", (float("nan"),)))
    assert not match(r("VARCHAR", (None,)), r("VARCHAR", ("NULL",)))
    assert match(r("VARCHAR", (None,)), r("INTEGER", (None,)))  # all-NULL columns


def test_infinities_and_nan() -> None:
    inf = float("inf")
    assert match(r("DOUBLE", (inf,), (-inf,)), r("DOUBLE", (-inf,), (inf,)))
    assert not match(r("DOUBLE", (inf,)), r("DOUBLE", (1e308,)))
    assert match(r("DOUBLE", (-0.0,)), r("DOUBLE", (0.0,)))


def test_numbers_of_every_width_compare_as_numbers() -> None:
    assert match(r("FLOAT", (1.1,)), r("DOUBLE", (1.1,)))
    assert match(r("DECIMAL(18,3)", (Decimal("2.500"),)), r("DOUBLE", (2.5,)))
    assert match(r("DECIMAL(18,3)", (Decimal("3.000"),)), r("INTEGER", (3,)))


def test_booleans_are_not_numbers_and_strings_are_exact() -> None:
    assert not match(r("BOOLEAN", (False,)), r("INTEGER", (0,)))
    assert match(r("BOOLEAN", (False,), (True,)), r("BOOLEAN", (True,), (False,)))
    assert not match(r("VARCHAR", ("a ",)), r("VARCHAR", ("a",)))
    assert not match(r("VARCHAR", ("1.0",)), r("DOUBLE", (1.0,)))


def test_dates_and_timestamps_compare_as_instants() -> None:
    day = dt.date(2020, 1, 1)
    assert match(r("DATE", (day,)), r("TIMESTAMP", (dt.datetime(2020, 1, 1),)))
    assert not match(r("DATE", (day,)), r("TIMESTAMP", (dt.datetime(2020, 1, 1, 0, 0, 1),)))
    aware = dt.datetime(2020, 1, 1, 5, tzinfo=dt.UTC)
    assert match(r("TIMESTAMPTZ", (aware,)), r("TIMESTAMP", (dt.datetime(2020, 1, 1, 5),)))
    assert not match(r("DATE", (day,)), r("VARCHAR", ("2020-01-01",)))


def test_nested_values_compare_by_structure() -> None:
    assert match(r("INTEGER[]", ([1, 2],)), r("DOUBLE[]", ([1.0, 2.0],)))
    assert not match(r("INTEGER[]", ([1, 2],)), r("INTEGER[]", ([2, 1],)))
    assert not match(r("INTEGER[]", ([1, 2],)), r("VARCHAR", ("[1, 2]",)))


# -- shape, empties, condition columns ------------------------------------------------


def test_empty_results() -> None:
    assert match(r("INTEGER VARCHAR"), r("VARCHAR INTEGER"))
    assert not match(r("INTEGER VARCHAR"), r("INTEGER"))
    assert match(r(""), r(""))
    v = compare(r("INTEGER", (1,)), r("INTEGER"))
    assert not v.match and v.reason == "predicted has 0 rows, gold 1"


def test_duplicate_column_names_are_fine() -> None:
    gold = r("INTEGER INTEGER", (1, 2), (3, 4), names="n n")
    assert match(gold, r("INTEGER INTEGER", (4, 3), (2, 1), names="n n"))


def test_condition_columns_need_one_distinct_predicted_column_each() -> None:
    gold = r("INTEGER VARCHAR", (1, "a"), (2, "b"))
    assert match(gold, r("VARCHAR INTEGER", ("x", 2), ("y", 1)), condition_cols=[0])
    assert not match(gold, r("INTEGER", (1,), (2,)), condition_cols=[0, 1])
    same = r("INTEGER INTEGER", (1, 1), (2, 2))
    assert not match(same, r("INTEGER", (1,), (2,)), condition_cols=[0, 1])
    assert match(same, r("INTEGER INTEGER", (2, 2), (1, 1)), condition_cols=[0, 1])
    with pytest.raises(ValueError):
        compare(gold, gold, condition_cols=[2])


# -- reasons --------------------------------------------------------------------------


def test_reasons_say_where_results_differ() -> None:
    gold = r("INTEGER VARCHAR", (1, "a"), (2, "b"), names="n name")
    assert compare(gold, r("INTEGER", (1,), (2,))).reason == "predicted has 1 columns, gold 2"
    assert compare(gold, r("INTEGER VARCHAR", (1, "a"))).reason == "predicted has 1 rows, gold 2"
    v = compare(gold, r("INTEGER VARCHAR", (1, "a"), (2, "B")))
    assert v.reason.startswith("column 2 'name' of gold matches no predicted column; with ")
    v = compare(gold, r("INTEGER VARCHAR", (1, "b"), (2, "a")))
    assert "gold row(s) have no match" in v.reason and "(1, 'a')" in v.reason
    v = compare(r("DOUBLE", (10.0,), (9.5,)), r("DOUBLE", (9.999,), (9.5,)), order_matters=True)
    assert v.reason.endswith("row 1 differs in column 1 'c1': predicted 9.999 vs gold 10.0")
    v = compare(gold, r("VARCHAR INTEGER", ("b", 2), ("a", 1), names="label k"))
    assert v.match and "columns mapped by content" in v.reason and "'k'" in v.reason


def test_multiset_reason_counts_missing_and_extra_rows() -> None:
    v = compare(r("INTEGER", (1,), (1,), (2,)), r("INTEGER", (1,), (2,), (2,)))
    assert not v.match
    assert "1 gold row(s) have no match in the prediction, e.g. row 1 (1)" in v.reason
    assert "1 predicted row(s) match no gold row, e.g. row 2 (2)" in v.reason


# -- mapping search -------------------------------------------------------------------


def test_columns_with_equal_content_signatures_are_told_apart_by_rows() -> None:
    gold = r("INTEGER INTEGER", (1, 2), (2, 3), (3, 1))
    assert match(gold, r("INTEGER INTEGER", (2, 1), (3, 2), (1, 3)))
    assert not match(gold, r("INTEGER INTEGER", (1, 2), (2, 1), (3, 3)))


@pytest.mark.parametrize("width", [2, 6, 10, 14])
def test_wide_results_of_one_value_domain_in_any_column_order(width: int) -> None:
    rng = np.random.default_rng(width)
    data = rng.integers(0, 10, size=(200, width))
    gold = QueryResult.from_arrow(pa.table({f"g{i}": data[:, i] for i in range(width)}))
    perm, rows = rng.permutation(width), rng.permutation(200)
    pred = QueryResult.from_arrow(pa.table({f"p{j}": data[rows, i] for j, i in enumerate(perm)}))
    assert match(gold, pred)
    broken = data[rows][:, perm].copy()
    broken[7, 0] = (broken[7, 0] + 1) % 10
    broken[8, 0] = (broken[8, 0] + 9) % 10  # column multisets may stay equal
    worse = QueryResult.from_arrow(pa.table({f"p{j}": broken[:, j] for j in range(width)}))
    assert not match(gold, worse)


def test_identical_columns_do_not_blow_up_the_search() -> None:
    col = list(range(50))
    gold = QueryResult.from_arrow(pa.table({f"a{i}": col for i in range(12)}))
    assert match(gold, QueryResult.from_arrow(pa.table({f"b{i}": col[::-1] for i in range(12)})))


def test_the_search_budget_is_reported() -> None:
    gold = r("INTEGER INTEGER INTEGER", (1, 2, 3), (2, 3, 1), (3, 1, 2))
    pred = r("INTEGER INTEGER INTEGER", (1, 3, 2), (2, 1, 3), (3, 2, 1))  # 2 and 3 swapped
    assert compare_bijective(gold, pred, Engine(RULES, Tolerance())).match
    v = compare_bijective(gold, pred, Engine(RULES, Tolerance(), budget=0))
    assert not v.match and "search budget" in v.reason


def test_columns_alike_in_every_value_are_told_apart_by_how_they_relate() -> None:
    rng = np.random.default_rng(5)
    base = rng.integers(0, 1000, 5000)
    data = np.stack([rng.permutation(base) for _ in range(14)], axis=1)  # one multiset
    gold = QueryResult.from_arrow(pa.table({f"g{i}": data[:, i] for i in range(14)}))
    perm, rows = rng.permutation(14), rng.permutation(5000)
    pred = QueryResult.from_arrow(pa.table({f"p{j}": data[rows, i] for j, i in enumerate(perm)}))
    assert match(gold, pred)
    assert not match(
        gold,
        QueryResult.from_arrow(
            pa.table({f"p{j}": np.roll(data[:, i], j == 0) for j, i in enumerate(perm)})
        ),
    )


def test_tolerant_rows_that_sort_apart_are_paired_again() -> None:
    edge = 1.0009765625  # a value on the quantisation grid's rounding boundary
    a, b = edge - 1e-12, edge + 1e-12
    gold = r("DOUBLE DOUBLE", (a, 5.0), (b, 3.0))
    assert match(gold, r("DOUBLE DOUBLE", (b, 5.0), (a, 3.0)))
    assert not match(gold, r("DOUBLE DOUBLE", (b, 5.0), (a, 4.0)))


# -- several gold answers, errors ------------------------------------------------------


def test_several_gold_answers_pass_if_any_matches() -> None:
    a, b = r("INTEGER", (1,)), r("INTEGER", (2,))
    v = compare([a, b], r("INTEGER", (2,)))
    assert v.match and v.reason.startswith("matches gold answer 2 of 2")
    v = compare([a, b], r("INTEGER", (3,)))
    assert not v.match and v.reason.startswith("matches none of 2 gold answers")
    with pytest.raises(ValueError):
        compare([], a)


def test_bad_options_are_refused() -> None:
    a = r("INTEGER", (1,))
    with pytest.raises(ValueError, match="known profiles: .*sqlgold"):
        compare(a, a, "spider")
    with pytest.raises(ValueError, match="does not take tolerance"):
        compare(a, a, "spider2", tolerance=(0.1, 0.1))
    with pytest.raises(ValueError, match="does not take tie_k"):
        compare(a, a, tie_k=1)
    with pytest.raises(ValueError):
        compare(a, "SELECT 1")  # type: ignore[arg-type]


# -- agreement with a brute-force definition ------------------------------------------


def _same(a, b, ta: str, tb: str) -> bool:
    """sqlgold's value equality, written out case by case."""
    if a is None or b is None:
        return a is None and b is None
    nums = ("INTEGER", "BIGINT", "DOUBLE", "DECIMAL(18,3)")
    if ta in nums and tb in nums:
        if ta in ("INTEGER", "BIGINT") and tb in ("INTEGER", "BIGINT"):
            return a == b
        x, y = float(a), float(b)
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return x == y or abs(x - y) <= 1e-9 + 1e-6 * max(abs(x), abs(y))
    times = ("DATE", "TIMESTAMP")
    if ta in times and tb in times:

        def as_dt(v):
            return v if isinstance(v, dt.datetime) else dt.datetime(v.year, v.month, v.day)

        return as_dt(a) == as_dt(b)
    return ta == tb and a == b


def _brute_force(gold, pred, gtypes, ptypes, ordered: bool) -> bool:
    if len(gtypes) != len(ptypes) or len(gold) != len(pred):
        return False

    def row_eq(g, p, perm) -> bool:
        return all(_same(g[i], p[perm[i]], gtypes[i], ptypes[perm[i]]) for i in range(len(gtypes)))

    for perm in itertools.permutations(range(len(ptypes))):
        if ordered:
            if all(row_eq(g, p, perm) for g, p in zip(gold, pred, strict=True)):
                return True
        elif any(
            all(row_eq(g, pred[j], perm) for g, j in zip(gold, order, strict=True))
            for order in itertools.permutations(range(len(pred)))
        ):
            return True
    return False


_POOL = {
    "INTEGER": [0, 1, 2, 3, None],
    "BIGINT": [1, 2, 10**12, None],
    "DOUBLE": [0.3, 0.1 + 0.2, 1.0, 1.0000001, 2.0, float("nan"), None],
    "DECIMAL(18,3)": [Decimal("1.000"), Decimal("0.300"), Decimal("2.000"), None],
    "VARCHAR": ["a", "b", "A", "1", "", None],
    "BOOLEAN": [True, False, None],
    "DATE": [dt.date(2020, 1, 1), dt.date(2020, 1, 2), None],
    "TIMESTAMP": [dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 1, 12), None],
}
_CAST = {"INTEGER": "DOUBLE", "BIGINT": "DECIMAL(18,3)", "DATE": "TIMESTAMP"}


def _cast(v, target: str):
    if v is None:
        return None
    if target == "DOUBLE":
        return float(v)
    if target == "DECIMAL(18,3)":
        return Decimal(v).quantize(Decimal("0.001"))
    return dt.datetime(v.year, v.month, v.day)


def test_agrees_with_brute_force_on_random_small_results() -> None:
    rng = random.Random(7)
    for _ in range(300):
        gtypes = [rng.choice(list(_POOL)) for _ in range(rng.randint(1, 3))]
        gold = [tuple(rng.choice(_POOL[t]) for t in gtypes) for _ in range(rng.randint(0, 4))]
        pred = [list(row) for row in gold]
        ptypes = list(gtypes)
        rng.shuffle(pred)
        for _ in range(rng.randint(0, 2)):
            j = rng.randrange(len(ptypes))
            step = rng.random()
            if step < 0.3 and ptypes[j] in _CAST:
                target = _CAST[ptypes[j]]
                if not (target == "DOUBLE" and any(abs(row[j] or 0) > 2**53 for row in pred)):
                    for row in pred:
                        row[j] = _cast(row[j], target)
                    ptypes[j] = target
            elif step < 0.6 and pred:
                pred[rng.randrange(len(pred))][j] = rng.choice(_POOL[ptypes[j]])
            else:
                perm = list(range(len(ptypes)))
                rng.shuffle(perm)
                ptypes = [ptypes[i] for i in perm]
                pred = [[row[i] for i in perm] for row in pred]
        ordered = rng.random() < 0.3
        prows = [tuple(row) for row in pred]
        want = _brute_force(gold, prows, gtypes, ptypes, ordered)
        got = match(r(" ".join(gtypes), *gold), r(" ".join(ptypes), *prows), order_matters=ordered)
        assert got == want, (gtypes, gold, ptypes, prows, ordered)


def test_a_tolerant_mapping_is_found_when_the_exact_one_is_a_dead_end() -> None:
    # a equals x exactly and y within the tolerance; b is close to x only
    gold = r("DOUBLE DOUBLE", (1.0, 1 - 9e-7))
    pred = r("DOUBLE DOUBLE", (1.0, 1 + 5e-7))
    v = compare(gold, pred)
    assert v.match and "1 'c1'<-2 'c2'" in v.reason


def test_compare_works_from_threads_and_forked_workers() -> None:
    import multiprocessing
    import sys
    from concurrent.futures import ThreadPoolExecutor

    gold = r("VARCHAR INTEGER", ("a", 1), ("b", 2))
    pred = r("INTEGER VARCHAR", (2, "b"), (1, "a"))
    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(lambda _: match(gold, pred), range(8)))
    if sys.platform != "linux":
        pytest.skip("fork start method is Linux's")
    worker = multiprocessing.get_context("fork").Process(target=_compare_in_child)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        worker.kill()
        pytest.fail("a forked worker hung while comparing")
    assert worker.exitcode == 0


def _compare_in_child() -> None:
    gold = r("VARCHAR", ("a",), ("b",))
    ok = match(gold, r("VARCHAR", ("b",), ("a",)))
    raise SystemExit(0 if ok else 1)


IDENTICAL = [
    (["a", "b"], [(1, "x"), (2, "y")]),
    (["a", "b", "c"], [(1, 1, 1), (1, 1, 1), (2, 2, 2)]),  # columns of the same content
    (["a", "b"], [(1, "x"), (1, "x")]),  # duplicate rows
    (["d"], [(dt.date(2020, 1, 1),), (None,)]),
    (["f", "g"], [(0.1, 0.1), (float("nan"), 2.0)]),  # NaN: left to the comparison proper
    (["e"], []),
]


@pytest.mark.parametrize(("names", "rows"), IDENTICAL)
@pytest.mark.parametrize("order_matters", [False, True])
@pytest.mark.parametrize("condition_cols", [None, (0,)])
def test_an_identical_result_gets_the_verdict_and_reason_of_the_mapping_search(
    names, rows, order_matters, condition_cols
):
    """A prediction whose result is its gold's, column for column, skips the mapping
    search (the usual right answer); its verdict and reason are the search's own."""
    gold = QueryResult.from_rows(names, rows, ["INTEGER"] * len(names) if not rows else None)
    pred = QueryResult.from_rows([n.upper() for n in names], rows, list(gold.types))
    said = compare(gold, pred, order_matters=order_matters, condition_cols=condition_cols)
    searched = compare_bijective(
        gold,
        pred,
        Engine(RULES, Tolerance(rel=1e-6, abs=1e-9)),
        order_matters=order_matters,
        condition_cols=condition_cols,
    )
    assert (said.match, said.reason) == (searched.match, searched.reason)
    assert said.match
