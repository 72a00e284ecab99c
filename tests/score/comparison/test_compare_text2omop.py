"""The text2omop profile: TEXT-TO-OMOP's results_equal (f5c858f) on the 39 reference cases
and on the cases its rule decides differently from sqlgold's own.

The verdicts are worked out from its definition: NULL read as '', each row's values
sorted by (type name, repr), rows sorted by those keys, lists of rows equal under
Python's ``==``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pytest

from score.comparison.compare import compare
from score.comparison.profiles.text2omop import canonical_rows
from score.execution.result import QueryResult
from tests.score.comparison.test_compare_reference import CASES, result

# case number -> TEXT-TO-OMOP's verdict, from its definition:
#  3, 35: rows are always sorted, so an order the gold asks for is not checked
#  4: (1,'a') and ('a',1) sort to the same row
#  9, 10: duplicates count (a multiset of rows)
#  17, 25, 26: 1 == 1.0 == True; (True, 5) sorts to (True, 5), (1, 5) to (1, 5)
#  18: (1.0, 1.5) sorts to (1.0, 1.5), (1, 1.5) to (1.5, 1): the type name sorts first
#  22: NULL is read as ''
#  24: NaN != NaN;  28: a date != a datetime;  29: Decimal('1.10') != 1.1
#  38: lists compare as lists (no hashing, so no crash)
TEXT2OMOP = {n: "F" for n in range(1, 40)}
TEXT2OMOP.update({n: "T" for n in (1, 2, 3, 4, 17, 20, 22, 25, 26, 30, 38)})


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.n}")
def test_the_reference_cases_get_text2omops_verdict(case) -> None:
    verdict = compare(case.gold, case.pred, "text2omop", **case.flags())
    assert verdict.match is (TEXT2OMOP[case.n] == "T"), f"case {case.n}: {verdict.reason}"
    assert verdict.reason.startswith("TEXT-TO-OMOP")


def test_values_swapped_between_columns_in_some_rows_are_equal_unlike_sqlgold() -> None:
    gold = result("INTEGER INTEGER", (1, 5), (2, 6))
    swapped = result("INTEGER INTEGER", (5, 1), (2, 6))
    assert compare(gold, swapped, "text2omop").match
    assert not compare(gold, swapped, "sqlgold").match
    # whole columns swapped: both rules agree
    assert compare(gold, result("INTEGER INTEGER", (5, 1), (6, 2)), "sqlgold").match


def test_null_is_the_empty_string_and_nothing_else() -> None:
    gold = result("VARCHAR INTEGER", (None, 1), ("x", 2))
    assert compare(gold, result("INTEGER VARCHAR", (1, ""), (2, "x")), "text2omop").match
    assert not compare(gold, result("VARCHAR INTEGER", ("None", 1), ("x", 2)), "text2omop").match
    assert not compare(gold, result("INTEGER INTEGER", (0, 1), (None, 2)), "text2omop").match
    # sqlgold: NULL is its own value
    assert not compare(result("VARCHAR", (None,)), result("VARCHAR", ("",)), "sqlgold").match


def test_values_sort_by_their_text_not_their_size() -> None:
    # (10, 9) and (9, 10) both sort to (10, 9): '10' < '9'
    assert canonical_rows(result("INTEGER INTEGER", (9, 10))) == [(10, 9)]
    pair = result("INTEGER INTEGER", (10, 9)), result("INTEGER INTEGER", (9, 10))
    assert compare(*pair, "text2omop").match


def test_rows_of_other_widths_or_counts_never_match_and_say_why() -> None:
    gold = result("INTEGER VARCHAR", (1, "a"), (2, "b"))
    wider = compare(gold, result("INTEGER VARCHAR INTEGER", (1, "a", 9), (2, "b", 9)), "text2omop")
    assert not wider.match and "3 values, gold rows 2" in wider.reason
    fewer = compare(gold, result("INTEGER VARCHAR", (1, "a")), "text2omop")
    assert not fewer.match and "1 row(s), gold 2" in fewer.reason
    other = compare(gold, result("INTEGER VARCHAR", (1, "a"), (2, "c")), "text2omop")
    assert not other.match and "sorted row 2 differs" in other.reason and "'c'" in other.reason


def test_typed_values_as_the_client_returns_them() -> None:
    def one(arrow_type: pa.DataType, value: object) -> QueryResult:
        return QueryResult.from_arrow(pa.table({"v": pa.array([value], arrow_type)}))

    day = dt.date(2020, 1, 1)
    assert compare(one(pa.date32(), day), one(pa.date32(), day), "text2omop").match
    assert not compare(one(pa.date32(), day), one(pa.string(), "2020-01-01"), "text2omop").match
    amount = Decimal("2.50")
    assert compare(one(pa.decimal128(5, 2), amount), one(pa.float64(), 2.5), "text2omop").match
    assert compare(one(pa.int64(), 2**62), one(pa.int64(), 2**62), "text2omop").match
