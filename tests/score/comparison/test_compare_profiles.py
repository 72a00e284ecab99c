"""Peer profiles beyond the 39 reference cases: each peer's quirks, its vectorised and
Python paths agreeing, crashes reported, the tie adapters, and the registry."""

from __future__ import annotations

import datetime as dt
import doctest
import importlib
from decimal import Decimal

import numpy as np
import pyarrow as pa
import pytest

from score.comparison.compare import PROFILES, compare, profile_names
from score.comparison.profiles import spider_ts
from score.comparison.profiles.csv_roundtrip import csv_column
from score.comparison.profiles.ehrsql import canonical_rows, process_item
from score.execution.result import QueryResult


def q(names: str, *rows: tuple, types: str | None = None) -> QueryResult:
    return QueryResult.from_rows(names.split(), rows, types.split() if types else None)


def typed(**cols: pa.Array) -> QueryResult:
    return QueryResult.from_arrow(pa.table(cols))


def match(gold, pred, profile, **kw) -> bool:
    return compare(gold, pred, profile, **kw).match


# -- registry -------------------------------------------------------------------------


def test_registry_names_and_summaries() -> None:
    assert profile_names() == tuple(sorted(PROFILES))
    assert set(profile_names()) == {
        "sqlgold",
        "healthllm",
        "spider-ts",
        "spider2",
        "ehrsql2024",
        "snuh",
        "bird",
        "set",
        "text2omop",
        "any_k_from_tie_set",
        "any_one_argmax",
    }
    assert all(p.summary and p.name == name for name, p in PROFILES.items())


@pytest.mark.parametrize(
    "module",
    [
        "score.comparison.compare",
        "score.comparison.values",
        "score.comparison.order_matters",
        "score.comparison.result_diff",
        "score.comparison.python_values",
        "score.comparison.profiles.base",
        "score.comparison.profiles.bijective",
        "score.comparison.profiles.sqlgold",
        "score.comparison.profiles.healthllm",
        "score.comparison.profiles.snuh",
        "score.comparison.profiles.spider_ts",
        "score.comparison.profiles.spider2",
        "score.comparison.profiles.csv_roundtrip",
        "score.comparison.profiles.ehrsql",
        "score.comparison.profiles.bird",
        "score.comparison.profiles.ties",
        "score.comparison.profiles.logical_form",
    ],
)
def test_every_comparison_module_shows_an_example(module: str) -> None:
    """Each module's docstrings carry runnable examples (pytest's --doctest-modules runs
    them)."""
    found = doctest.DocTestFinder().find(importlib.import_module(module))
    assert sum(len(t.examples) for t in found) > 0


# -- spider-ts --------------------------------------------------------------------------


def test_ts_quirk_needs_mixed_types() -> None:
    assert not match(q("a b", (True, 5)), q("a b", (1, 5)), "spider-ts")
    assert match(q("a b", (5, True)), q("a b", (True, 5)), "spider-ts")  # same types, swapped
    assert match(q("a b", (1.0, 2.5)), q("b a", (2.5, 1.0)), "spider-ts")


def test_ts_vectorised_and_python_paths_agree_on_permuted_wide_results() -> None:
    rng = np.random.default_rng(3)
    data = rng.integers(0, 4, size=(60, 6))
    gold = typed(**{f"g{i}": data[:, i] for i in range(6)})
    perm, rows = rng.permutation(6), rng.permutation(60)
    pred = typed(**{f"p{j}": data[rows, i] for j, i in enumerate(perm)})
    assert spider_ts._vectorisable(gold, pred)
    assert match(gold, pred, "spider-ts")
    assert spider_ts._python(gold, pred, False).match
    assert not match(gold, pred, "spider-ts", order_matters=True)
    assert not spider_ts._python(gold, pred, True).match


@pytest.mark.parametrize(
    ("gold", "pred"),
    [
        (q("a b", (-0.0, -1.0)), q("a b", (0.0, -1.0))),  # '-0.0' and '-1.0' sort apart
        (q("a b", (1, 2.5), (2, 0.5)), q("b a", (2.5, 1.0), (0.5, 2.0))),
        (q("a b", (1, 2.5), (2, 0.5)), q("b a", (2.5, 1), (0.5, 2))),
        (q("a b c", (True, 1, "x")), q("a b c", (1, True, "x"))),
        (q("a b", (10, 9.5)), q("a b", (10.0, 9.5))),
        (q("a b", (float("nan"), 1)), q("a b", (float("nan"), 1))),
    ],
)
def test_ts_vectorised_quick_rej_agrees_with_python(gold, pred) -> None:
    assert spider_ts._vectorisable(gold, pred)
    for order in (False, True):
        want = spider_ts._python(gold, pred, order).match
        assert match(gold, pred, "spider-ts", order_matters=order) is want


def test_ts_decimal_is_exact_binary_and_nan_never_equal() -> None:
    half = typed(x=pa.array([Decimal("1.5")], pa.decimal128(3, 1)))
    tenth = typed(x=pa.array([Decimal("1.1")], pa.decimal128(3, 1)))
    assert match(half, q("x", (1.5,)), "spider-ts")  # Decimal('1.5') == 1.5 in Python
    assert not match(tenth, q("x", (1.1,)), "spider-ts")
    assert not match(q("x", (float("nan"),)), q("x", (float("nan"),)), "spider-ts")


def test_ts_crash_only_where_the_peer_hashes() -> None:
    lists = typed(x=pa.array([[1], [2]]))
    other = typed(x=pa.array([[2], [3]]))
    assert "crash" in compare(lists, lists, "spider-ts").reason
    v = compare(lists, other, "spider-ts", order_matters=True)  # quick_rej returns first
    assert not v.match and "crash" not in v.reason


# -- bird / set -----------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["bird", "set"])
def test_set_equality(profile: str) -> None:
    assert match(q("a b", (1, "x"), (1, "x")), q("a b", (1, "x")), profile)
    assert not match(q("a b", (1, "x")), q("b a", ("x", 1)), profile)
    assert match(q("a", (1,)), q("a", (True,)), profile)
    assert match(q("a", (1,)), q("a", (1.0,)), profile)
    half = typed(a=pa.array([Decimal("1.5")], pa.decimal128(3, 1)))
    tenth = typed(a=pa.array([Decimal("1.1")], pa.decimal128(3, 1)))
    assert match(half, q("a", (1.5,)), profile)  # Python: Decimal('1.5') == 1.5
    assert not match(tenth, q("a", (1.1,)), profile)  # but Decimal('1.1') != 1.1
    assert not match(q("a", (2**53 + 1,)), q("a", (float(2**53),)), profile)
    assert not match(q("a", (dt.date(2020, 1, 1),)), q("a", (dt.datetime(2020, 1, 1),)), profile)
    assert match(q("a", ("x",)), q("a", ("x",), types="UUID"), profile) is False


def test_bird_crash_and_null_lists() -> None:
    lists = typed(x=pa.array([[1]]))
    assert "crash" in compare(lists, lists, "bird").reason
    nulls = typed(x=pa.array([None], pa.list_(pa.int64())))
    assert match(nulls, q("x", (None,), types="VARCHAR"), "bird")


# -- ehrsql2024 -------------------------------------------------------------------------


def test_ehr_cells() -> None:
    assert [process_item(x) for x in (1, 2.0004, "2.0006", True, None, "1_000", " 7 ", "abc")] == [
        "1.0",
        "2.0",
        "2.001",
        "1.0",
        "None",
        "1000.0",
        "7.0",
        "abc",
    ]
    assert process_item(dt.date(2020, 1, 1)) == "2020-01-01"
    assert process_item([1, 2]) == "[1, 2]"


def test_ehr_sorts_as_text_and_keeps_100_rows() -> None:
    gold = q("n", *[(i,) for i in range(150)])
    rows = canonical_rows(gold)
    assert len(rows) == 100 and rows[:3] == [("0.0",), ("1.0",), ("10.0",)]
    assert match(gold, q("n", *[(i,) for i in range(149, -1, -1)]), "ehrsql2024")
    assert not match(q("a b", (1, 2)), q("b a", (2, 1)), "ehrsql2024")
    assert match(q("x", (-0.0,)), q("x", (-0.0,)), "ehrsql2024")
    assert not match(q("x", (-0.0,)), q("x", (0.0,)), "ehrsql2024")


def test_ehr_vectorised_integers_match_python() -> None:
    values = [0, -5, 2**53 + 1, 10**15, -(10**15) + 3]
    gold = q("n", *[(v,) for v in values])
    assert canonical_rows(gold) == sorted((process_item(v),) for v in values)


# -- spider2 ----------------------------------------------------------------------------


def test_csv_round_trip_reads_like_pandas() -> None:
    assert csv_column(pa.array(["007", " 8 "]), "VARCHAR").python() == [7, 8]
    assert csv_column(pa.array(["1.5", "inf"]), "VARCHAR").python() == [1.5, float("inf")]
    assert csv_column(pa.array(["True", None]), "VARCHAR").python() == [True, 0]
    assert csv_column(pa.array(["1_000", "2"]), "VARCHAR").python() == ["1_000", "2"]
    assert csv_column(pa.array([1, None]), "BIGINT").python() == [1.0, 0]
    ts = pa.array([dt.datetime(2020, 1, 1), dt.datetime(2020, 1, 2, 0, 0, 0, 500000)])
    assert csv_column(ts, "TIMESTAMP").python() == [
        "2020-01-01 00:00:00.000",
        "2020-01-02 00:00:00.500",
    ]
    assert csv_column(pa.array([None, None], pa.string()), "VARCHAR").python() == [0, 0]


def test_spider2_columns_are_matched_independently() -> None:
    gold = q("a b", (1, "x"), (2, "y"))
    assert match(gold, q("b a z", ("y", 1, 0), ("x", 2, 0)), "spider2")
    assert match(q("a", (1,), (2,)), q("a", ("1",), ("2",)), "spider2")
    assert match(q("a", (None,)), q("a", ("NA",)), "spider2")
    big = 2**60
    assert match(q("a", (big,)), q("a", (big + 1,)), "spider2")  # isclose in doubles


def test_spider2_several_gold_answers() -> None:
    a, b = q("n", (1,)), q("n", (2,))
    assert match([a, b], q("m", (2,)), "spider2")
    assert not match([a, b], q("m", (3,)), "spider2")


def test_spider2_reason_names_the_lonely_column() -> None:
    v = compare(q("a", (10.0,), (9.5,)), q("a", (9.5,), (9.999,)), "spider2")
    assert not v.match and "gold column 1 'a' equals no predicted column" in v.reason
    assert "sorted position 1: predicted 9.5 vs gold 10.0" in v.reason  # '10.0' < '9.5'


# -- snuh, healthllm ----------------------------------------------------------------------


def test_snuh_rounds_like_python_and_keeps_order_when_asked() -> None:
    assert match(q("x", (2.6745,)), q("x", (round(2.6745, 3),)), "snuh")
    assert match(q("x", (1.0004,), (2.0,)), q("x", (2.0,), (1.0,)), "snuh")
    assert not match(q("x", (1.0,), (2.0,)), q("x", (2.0,), (1.0,)), "snuh", order_matters=True)
    assert not match(q("x", ("1",)), q("x", (1,)), "snuh")


def test_healthllm_ignores_order_and_uses_julia_isapprox() -> None:
    gold, pred = q("x", (1.0,), (2.0,)), q("x", (2.0,), (1.0,))
    assert match(gold, pred, "healthllm", order_matters=True)
    assert match(q("x", (1.0,)), q("x", (1.0 + 1e-9,)), "healthllm")
    assert not match(q("x", (1.0,)), q("x", (1.0 + 1e-7,)), "healthllm")
    assert match(q("x", (1.0,)), q("x", (1.01,)), "healthllm", tolerance=(0.1, 0.0))


# -- tie adapters -------------------------------------------------------------------------


TIES = q("who n", ("a", 5), ("b", 5), ("c", 5), ("c", 5))


def test_any_k_from_tie_set() -> None:
    assert match(TIES, q("who n", ("c", 5), ("a", 5)), "any_k_from_tie_set", tie_k=2)
    assert match(TIES, q("n who", (5, "c"), (5.001, "c")), "any_k_from_tie_set", tie_k=2)
    assert not match(TIES, q("who n", ("a", 5), ("a", 5)), "any_k_from_tie_set", tie_k=2)
    assert not match(TIES, q("who n", ("a", 5)), "any_k_from_tie_set", tie_k=2)
    assert not match(TIES, q("who n", ("d", 5), ("a", 5)), "any_k_from_tie_set", tie_k=2)
    assert match(TIES, q("who", ("b",), ("a",)), "any_k_from_tie_set", tie_k=2, condition_cols=[0])
    assert not match(TIES, q("who", ("b",), ("a",)), "any_k_from_tie_set", tie_k=2)
    with pytest.raises(ValueError, match="needs tie_k"):
        compare(TIES, TIES, "any_k_from_tie_set")


def test_any_one_argmax() -> None:
    assert match(TIES, q("who n", ("b", 5)), "any_one_argmax")
    assert not match(TIES, q("who n", ("b", 6)), "any_one_argmax")
    assert not match(TIES, q("who n", ("b", 5), ("a", 5)), "any_one_argmax")


def test_ehr_vectorised_text_equals_python_str_round() -> None:
    from score.comparison.profiles.ehrsql import _float_texts

    rng = np.random.default_rng(11)
    values = np.concatenate(
        [
            rng.normal(0, 1, 2000),
            rng.normal(0, 1e7, 2000),
            np.round(rng.random(2000) * 100, 4),
            [
                0.0,
                -0.0,
                -0.0004,
                0.0005,
                -0.0005,
                2.675,
                1.0005,
                1e12,
                1e17,
                np.inf,
                -np.inf,
                np.nan,
            ],
        ]
    )
    assert _float_texts(values).to_pylist() == [process_item(float(v)) for v in values]


def test_timestamps_print_like_python_also_before_1970() -> None:
    stamps = [
        dt.datetime(1960, 5, 5, 1, 2, 3, 500000),
        dt.datetime(1, 1, 1, 0, 0, 0, 999999),
        dt.datetime(2020, 1, 1),
        None,
    ]
    gold = typed(t=pa.array(stamps, pa.timestamp("us")))
    assert canonical_rows(gold) == sorted((process_item(v),) for v in stamps)
    written = csv_column(pa.array(stamps[:2], pa.timestamp("us")), "TIMESTAMP").python()
    assert written == ["1960-05-05 01:02:03.500000", "0001-01-01 00:00:00.999999"]
