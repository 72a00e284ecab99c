"""Spider 2.0's whole-frame dtype rule: reference cases beyond the 39 of comparators.md.

Spider 2.0 takes its column vectors from ``frame.transpose().values.tolist()``, so a
frame (the gold cut to its condition columns, or the whole prediction) whose columns are
all numeric with a float column turns every integer into a float, which changes the
peer's ``str`` sort.  Each case's ``peer`` verdict is what Spider 2.0's own
``compare_pandas_table`` said after its CSV round trip (DuckDB -> pandas -> ``to_csv``
-> ``read_csv``), run under pandas 2.3.3 and 3.1.1 alike; the first three are the
examples of the issue that brought the rule in.  The tie adapters' code is not public:
their cases check that the rule carries over to them as our reading says.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pytest

from score.comparison.compare import compare
from score.comparison.profiles.csv_roundtrip import csv_column
from score.comparison.profiles.spider2 import FLOAT64, INT64, OBJECT, UINT64, as_frame, frame_dtype
from score.execution.result import QueryResult

B, C = 2**63 - 1, 2**53  # beyond 2**53: 9.223372036854776e+18 as a float; 2**53 exact
E16 = 10**16  # the first integer whose float prints with an exponent: '1e+16'
ARROW = {
    "BIGINT": pa.int64(),
    "UBIGINT": pa.uint64(),
    "INTEGER": pa.int32(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
}


def result(types: str, *rows: tuple) -> QueryResult:
    names = types.split()
    arrays = [pa.array([r[i] for r in rows], ARROW[t]) for i, t in enumerate(names)]
    table = pa.Table.from_arrays(arrays, names=[f"c{i + 1}" for i in range(len(names))])
    return QueryResult.from_arrow(table, types=names)


@dataclass(frozen=True)
class FrameCase:
    why: str
    gold: QueryResult
    pred: QueryResult
    peer: bool
    cc: tuple[int, ...] | None = None
    order: bool = False


r = result
CASES = [
    FrameCase(
        "issue 1: gold cut to int+float is float64, the prediction with text is object",
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        False,
        (0, 1),
    ),
    FrameCase(
        "issue 2: the prediction's text column keeps its integers exact",
        r("BIGINT DOUBLE", (B, 1.5), (C, 2.5)),
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "a")),
        False,
    ),
    FrameCase(
        "issue 3: both frames float64, so floats meet the gold's integers",
        r("BIGINT DOUBLE", (B, 1.5), (C, 2.5)),
        r("DOUBLE DOUBLE", (float(B), 1.5), (float(C), 2.5)),
        True,
    ),
    FrameCase(
        "issue 1 without condition columns: both frames object",
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        True,
    ),
    FrameCase(
        "issue 1 in row order: no sort, isclose alone",
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        r("BIGINT DOUBLE VARCHAR", (B, 1.5, "a"), (C, 2.5, "b")),
        True,
        (0, 1),
        True,
    ),
    FrameCase(
        "small integers too: '12' < '10000000000000000' but '1e+16' > '12.0'",
        r("BIGINT DOUBLE", (E16, 1.5), (12, 2.5)),
        r("BIGINT DOUBLE", (E16, 1.5), (12, 2.5)),
        False,
        (0,),
    ),
    FrameCase(
        "the same, both frames whole: both float64",
        r("BIGINT DOUBLE", (E16, 1.5), (12, 2.5)),
        r("DOUBLE BIGINT", (1.5, E16), (2.5, 12)),
        True,
    ),
    FrameCase(
        "a boolean beside numbers makes the frame object",
        r("BIGINT DOUBLE BOOLEAN", (E16, 1.5, True), (12, 2.5, False)),
        r("BIGINT DOUBLE BOOLEAN", (E16, 1.5, True), (12, 2.5, False)),
        True,
        (0, 2),
    ),
    FrameCase(
        "the gold cut to int+float again float64 against an object prediction",
        r("BIGINT DOUBLE BOOLEAN", (E16, 1.5, True), (12, 2.5, False)),
        r("BIGINT DOUBLE BOOLEAN", (E16, 1.5, True), (12, 2.5, False)),
        False,
        (0, 1),
    ),
    FrameCase(
        "int64 beside uint64 is float64 too",
        r("BIGINT UBIGINT", (E16, 2**64 - 1), (12, 3)),
        r("BIGINT UBIGINT VARCHAR", (E16, 2**64 - 1, "a"), (12, 3, "b")),
        False,
    ),
    FrameCase(
        "a column of nothing but NULL is float64",
        r("BIGINT DOUBLE", (E16, None), (12, None)),
        r("BIGINT DOUBLE VARCHAR", (E16, None, "a"), (12, None, "b")),
        False,
    ),
    FrameCase(
        "an integer column with a NULL is float64 and floats its neighbours",
        r("BIGINT INTEGER", (E16, 1), (12, None)),
        r("BIGINT INTEGER VARCHAR", (E16, 1, "a"), (12, None, "b")),
        False,
    ),
    FrameCase(
        "the same NULLs on both sides: both frames float64",
        r("BIGINT INTEGER", (E16, 1), (12, None)),
        r("INTEGER BIGINT", (1, E16), (None, 12)),
        True,
    ),
    FrameCase(
        "a float64 prediction against the gold cut to its int64 column",
        r("BIGINT VARCHAR", (E16, "a"), (12, "b")),
        r("BIGINT DOUBLE", (E16, 0.5), (12, 0.5)),
        False,
        (0,),
    ),
    FrameCase(
        "all integers: int64, exact on both sides",
        r("BIGINT INTEGER", (B, 1), (C, 2)),
        r("INTEGER BIGINT", (2, C), (1, B)),
        True,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.why)
def test_spider2_gives_the_peers_verdict(case: FrameCase) -> None:
    v = compare(case.gold, case.pred, "spider2", condition_cols=case.cc, order_matters=case.order)
    assert v.match is case.peer, v.reason


def test_frame_dtypes_follow_pandas() -> None:
    def col(values, arrow_type, duckdb_type):
        return csv_column(pa.array(values, arrow_type), duckdb_type)

    ints, floats = col([1, 2], pa.int64(), "BIGINT"), col([1.5, 2.5], pa.float64(), "DOUBLE")
    big = col(["18446744073709551615", "3"], pa.string(), "VARCHAR")
    text = col(["a", "b"], pa.string(), "VARCHAR")
    flag, flag_null = (
        col([True, False], pa.bool_(), "BOOLEAN"),
        col([True, None], pa.bool_(), "BOOLEAN"),
    )
    assert [c.dtype for c in (ints, floats, big, text, flag, flag_null)] == [
        INT64,
        FLOAT64,
        UINT64,
        OBJECT,
        "bool",
        OBJECT,
    ]
    assert col([1, None], pa.int64(), "BIGINT").dtype == FLOAT64
    assert col([None, None], pa.string(), "VARCHAR").dtype == FLOAT64
    assert col(["-1", "18446744073709551615"], pa.string(), "VARCHAR").dtype == OBJECT
    assert frame_dtype([ints, ints]) == INT64 and frame_dtype([big]) == UINT64
    assert frame_dtype([ints, floats]) == FLOAT64 and frame_dtype([ints, big]) == FLOAT64
    assert frame_dtype([ints, floats, text]) == OBJECT
    assert frame_dtype([ints, flag]) == OBJECT and frame_dtype([flag, flag]) == "bool"
    assert as_frame([ints, text]) == [ints, text]  # nothing converted outside float64
    assert [c.python() for c in as_frame([ints, floats])] == [[1.0, 2.0], [1.5, 2.5]]
    assert as_frame([big, floats])[0].python() == [float(2**64 - 1), 3.0]


def test_spider2_reason_shows_the_floats_the_peer_compares() -> None:
    case = CASES[0]
    v = compare(case.gold, case.pred, "spider2", condition_cols=case.cc)
    assert "9.223372036854776e+18" in v.reason, v.reason


# -- the tie adapters, built on the same comparison ------------------------------------


TIES = r("BIGINT DOUBLE", (E16, 1.5), (12, 1.5), (7, 1.5))


def test_any_k_chosen_rows_keep_the_golds_float64_frame() -> None:
    floats = r("BIGINT DOUBLE", (12, 1.5), (E16, 1.5))  # float64, like the chosen gold rows
    texts = r("BIGINT DOUBLE VARCHAR", (12, 1.5, "x"), (E16, 1.5, "y"))  # object
    assert compare(TIES, floats, "any_k_from_tie_set", tie_k=2).match
    assert not compare(TIES, texts, "any_k_from_tie_set", tie_k=2).match
    # the gold cut to its int64 column keeps its integers
    assert compare(TIES, texts, "any_k_from_tie_set", tie_k=2, condition_cols=[0]).match
    assert not compare(TIES, floats, "any_k_from_tie_set", tie_k=2, condition_cols=[0]).match
