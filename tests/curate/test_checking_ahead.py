"""Records checked two at a time: outcomes and progress in the records' order, a failure
ends the run."""

from __future__ import annotations

import threading
import time

import pytest

from curate.sources.records import SourceRecord
from curate.verify.paired_checks import CHECKING, checked_in_order
from score.errors import DatabaseError


def _records(n: int) -> list[SourceRecord]:
    return [
        SourceRecord(id=f"r{i}", question="Q?", gold_sql="SELECT 1", gold_dialect="duckdb")
        for i in range(n)
    ]


def test_two_records_are_checked_at_once():
    meet = threading.Barrier(CHECKING, timeout=30)  # broken if only one thread ever waits

    def check(record, ahead):
        meet.wait()
        return record.id

    records = _records(4)
    assert checked_in_order(records, [None] * 4, check) == ["r0", "r1", "r2", "r3"]


def test_outcomes_and_progress_keep_the_records_order():
    records = _records(6)
    seen: list[str] = []

    def check(record, ahead):
        if record.id in ("r0", "r2", "r4"):  # the first of each pair ends last
            time.sleep(0.05)
        return record.id.upper()

    out = checked_in_order(records, [None] * 6, check, lambda r: seen.append(r.id))
    assert out == ["R0", "R1", "R2", "R3", "R4", "R5"]
    assert seen == [r.id for r in records]


def test_a_database_gone_ends_the_run_and_nothing_more_starts():
    records = _records(8)
    started: list[str] = []

    def check(record, ahead):
        started.append(record.id)
        if record.id == "r1":
            raise DatabaseError("the database went away", path="x.duckdb")
        return record.id

    with pytest.raises(DatabaseError, match="went away"):
        checked_in_order(records, [None] * 8, check)
    assert len(started) <= 1 + 2 * CHECKING  # the records queued behind it never ran
