"""The 39 reference cases: every peer profile gives that peer's verdict, and sqlgold's own
profiles give the verdicts their module docs choose.

The cases are encoded here as results with explicit DuckDB types (DATE is not VARCHAR,
DECIMAL is not DOUBLE, NaN is a DOUBLE NaN).  ``T``/``F`` is the verdict, ``crash``
means the peer's own code raises: the profile then says no match and why.  One test
checks the shared reference table, when present, still lists the peer verdicts encoded
here, so a drift in either is caught.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from score.comparison.compare import compare
from score.execution.result import QueryResult

ARROW = {
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "VARCHAR": pa.string(),
    "BOOLEAN": pa.bool_(),
    "DATE": pa.date32(),
    "TIMESTAMP": pa.timestamp("us"),
    "DECIMAL(3,2)": pa.decimal128(3, 2),
    "INTEGER[]": pa.list_(pa.int32()),
}


def result(types: str, *rows: tuple) -> QueryResult:
    """A result with DuckDB column ``types`` (space separated) and Python ``rows``."""
    names = types.split()
    arrays = [pa.array([r[i] for r in rows], ARROW[t]) for i, t in enumerate(names)]
    table = pa.Table.from_arrays(arrays, names=[f"c{i + 1}" for i in range(len(names))])
    return QueryResult.from_arrow(table, types=names)


@dataclass(frozen=True)
class Case:
    """A reference case; ``peers`` holds the TS, S2, EHR and BIRD verdicts and ``ours``
    the sqlgold, snuh and healthllm ones (T match, F no match, X the peer crashes)."""

    n: int
    opt: str  # "" | "ord" (the gold asks for an order) | "cc" (condition_cols=[0])
    peers: str
    ours: str
    gold: QueryResult
    pred: QueryResult

    def flags(self) -> dict[str, Any]:
        return {
            "order_matters": self.opt == "ord",
            "condition_cols": [0] if self.opt == "cc" else None,
        }

    def verdict(self, column: str) -> str:
        order = ["ts", "s2", "ehr", "bird", "sqlgold", "snuh", "healthllm"]
        return (self.peers + self.ours)[order.index(column)]


r = result
D20 = dt.date(2020, 1, 1)
ROWS150 = [(f"a{i:03d}",) for i in range(150)]

# n, opt, peers (TS S2 EHR BIRD), ours (sqlgold snuh healthllm), gold, prediction
CASES = [
    Case(
        1,
        "",
        "TTTT",
        "TTT",
        r("INTEGER VARCHAR DOUBLE", (1, "a", 2.5)),
        r("INTEGER VARCHAR DOUBLE", (1, "a", 2.5)),
    ),
    Case(
        2,
        "",
        "TTTT",
        "TTT",
        r("INTEGER VARCHAR", (1, "a"), (2, "b"), (3, "c")),
        r("INTEGER VARCHAR", (3, "c"), (1, "a"), (2, "b")),
    ),
    Case(
        3,
        "ord",
        "FFTT",
        "FFT",
        r("INTEGER VARCHAR", (1, "a"), (2, "b"), (3, "c")),
        r("INTEGER VARCHAR", (3, "c"), (1, "a"), (2, "b")),
    ),
    Case(
        4,
        "",
        "TTFF",
        "TTT",
        r("INTEGER VARCHAR", (1, "a"), (2, "b")),
        r("VARCHAR INTEGER", ("a", 1), ("b", 2)),
    ),
    Case(
        5,
        "",
        "FTFF",
        "FFF",
        r("INTEGER VARCHAR", (1, "a"), (2, "b")),
        r("INTEGER VARCHAR INTEGER", (1, "a", 9), (2, "b", 9)),
    ),
    Case(6, "", "FFFF", "FFF", r("INTEGER VARCHAR", (1, "a"), (2, "b")), r("INTEGER", (1,), (2,))),
    Case(
        7, "cc", "FTFF", "TFF", r("INTEGER VARCHAR", (1, "a"), (2, "b")), r("INTEGER", (1,), (2,))
    ),
    Case(
        8,
        "cc",
        "FTFF",
        "TFF",
        r("INTEGER VARCHAR", (1, "x"), (2, "y")),
        r("INTEGER VARCHAR", (1, "zz"), (2, "qq")),
    ),
    Case(9, "", "FFFT", "FFF", r("INTEGER", (1,), (1,), (2,)), r("INTEGER", (1,), (2,), (2,))),
    Case(10, "", "FFFT", "FFF", r("INTEGER", (1,), (1,), (2,)), r("INTEGER", (1,), (2,))),
    Case(11, "", "FFFF", "FFF", r("INTEGER", (1,)), r("INTEGER", (1,), (2,))),
    Case(12, "", "FTTF", "TTT", r("DOUBLE", (0.3,)), r("DOUBLE", (0.1 + 0.2,))),
    Case(13, "", "FTFF", "FFF", r("DOUBLE", (1.0,)), r("DOUBLE", (1.005,))),
    Case(14, "", "FTTF", "FTF", r("DOUBLE", (2.0004,)), r("DOUBLE", (2.0,))),
    Case(15, "", "FTFF", "FFF", r("DOUBLE", (2.0004,)), r("DOUBLE", (2.0006,))),
    Case(16, "", "FTFF", "TFT", r("DOUBLE", (1e9,)), r("DOUBLE", (1e9 + 1,))),
    Case(17, "", "TTTT", "TTT", r("INTEGER", (1,)), r("DOUBLE", (1.0,))),
    Case(18, "", "FTTT", "TTT", r("DOUBLE DOUBLE", (1.0, 1.5)), r("INTEGER DOUBLE", (1, 1.5))),
    Case(19, "", "FTTF", "FFF", r("INTEGER", (1,)), r("VARCHAR", ("1",))),
    Case(20, "", "TTTT", "TTT", r("INTEGER", (None,)), r("INTEGER", (None,))),
    Case(21, "", "FTFF", "FFF", r("INTEGER", (None,)), r("INTEGER", (0,))),
    Case(22, "", "FTFF", "FFF", r("VARCHAR", (None,)), r("VARCHAR", ("",))),
    Case(23, "", "FTTF", "FFF", r("VARCHAR", (None,)), r("VARCHAR", ("None",))),
    Case(24, "", "FTTF", "TTT", r("DOUBLE", (float("nan"),)), r("DOUBLE", (float("nan"),))),
    Case(25, "", "TTTT", "FTT", r("BOOLEAN", (True,)), r("INTEGER", (1,))),
    Case(26, "", "FTTT", "FTT", r("BOOLEAN INTEGER", (True, 5)), r("INTEGER INTEGER", (1, 5))),
    Case(27, "", "FTTF", "FFF", r("DATE", (D20,)), r("VARCHAR", ("2020-01-01",))),
    Case(28, "", "FTFF", "TFT", r("DATE", (D20,)), r("TIMESTAMP", (dt.datetime(2020, 1, 1),))),
    Case(29, "", "FTTF", "TTT", r("DECIMAL(3,2)", (Decimal("1.10"),)), r("DOUBLE", (1.1,))),
    Case(30, "", "TTTT", "TTT", r("INTEGER"), r("INTEGER")),
    Case(31, "", "FFFF", "FFF", r("INTEGER", (1,)), r("INTEGER")),
    Case(
        32,
        "",
        "FTFF",
        "FFF",
        r("INTEGER VARCHAR", (1, "a"), (2, "b")),
        r("INTEGER VARCHAR", (1, "b"), (2, "a")),
    ),
    Case(33, "", "FTFF", "FFF", r("INTEGER INTEGER", (1, 1), (2, 2)), r("INTEGER", (1,), (2,))),
    Case(34, "", "FFFF", "FFF", r("DOUBLE", (10.0,), (9.5,)), r("DOUBLE", (9.5,), (9.999,))),
    Case(35, "ord", "FTFF", "FFF", r("DOUBLE", (10.0,), (9.5,)), r("DOUBLE", (9.999,), (9.5,))),
    Case(36, "", "FFTF", "FFF", r("VARCHAR", *ROWS150), r("VARCHAR", *ROWS150[:100])),
    Case(37, "", "FTFF", "FFF", r("VARCHAR", ("NA",)), r("VARCHAR", (None,))),
    Case(38, "", "XTTX", "TTT", r("INTEGER[]", ([1, 2],)), r("INTEGER[]", ([1, 2],))),
    Case(39, "", "FFFF", "FFF", r("VARCHAR", ("abc",)), r("VARCHAR", ("ABC",))),
]

PEERS = {"spider-ts": "ts", "spider2": "s2", "ehrsql2024": "ehr", "bird": "bird", "set": "bird"}
OURS = {"sqlgold": "sqlgold", "snuh": "snuh", "healthllm": "healthllm"}


def _check(case: Case, profile: str, expected: str) -> None:
    v = compare(case.gold, case.pred, profile, **case.flags())
    if expected == "X":
        assert not v.match and "crash" in v.reason, v
    else:
        assert v.match is (expected == "T"), f"case {case.n} under {profile}: {v.reason}"
    assert v.reason


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.n}")
@pytest.mark.parametrize("profile", list(PEERS))
def test_peer_profile_gives_the_peers_verdict(case: Case, profile: str) -> None:
    _check(case, profile, case.verdict(PEERS[profile]))


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"case{c.n}")
@pytest.mark.parametrize("profile", list(OURS))
def test_own_profiles_give_their_documented_verdict(case: Case, profile: str) -> None:
    _check(case, profile, case.verdict(OURS[profile]))


def test_every_case_is_encoded_once() -> None:
    assert [c.n for c in CASES] == list(range(1, 40))


def test_crash_reason_names_the_peer() -> None:
    case = CASES[37]
    assert "test-suite" in compare(case.gold, case.pred, "spider-ts").reason
    assert "BIRD" in compare(case.gold, case.pred, "bird").reason


def test_reference_table_still_lists_the_encoded_peer_verdicts(shared_dir: Path) -> None:
    path = shared_dir / "comparators.md"
    if not path.exists():
        pytest.skip("../shared/comparators.md is not present")
    rows = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"^\|\s*(\d+)\s*\|", line)
        if m:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            rows[int(m.group(1))] = cells[-4:]
    assert sorted(rows) == list(range(1, 40)), "the reference table no longer has cases 1-39"
    symbol = {"T": "T", "F": "F", "crash": "X"}
    for case in CASES:
        listed = "".join(symbol.get(v, "?") for v in rows[case.n])
        assert listed == case.peers, f"case {case.n}: table {rows[case.n]}, encoded {case.peers}"
