"""A task's gold result checked against the hash it was verified with (``gold_result.sha256``).

Curation pins the hash of each gold's result (:func:`score.comparison.result_hash.result_sha256`,
rows in order only when the task's order matters).  Scoring checks the gold result it
uses, whether it ran the gold or read it from the gold cache, against that hash: a
different hash means the database (or the engine) is not the one the task was verified
on, and the instance is ``gold_drift``, with both hashes in its reason, excluded from
every rate like ``gold_error``, and counted in the summary.

Hashing a result costs a pass over its values, so each gold result is hashed once per
run (:class:`GoldPins` remembers it by the gold cache's key).

>>> from score.execution.result import QueryResult
>>> pins = GoldPins()
>>> task = {"order_matters": False, "gold_result": {"sha256": "0" * 64}}
>>> pins.drift(task, QueryResult.from_rows(["n"], [(1,)]), "k")[:44]
'the gold result on this database has sha256 '
>>> right = {"order_matters": False, "gold_result": {"sha256": pinned_sha256(
...     QueryResult.from_rows(["n"], [(1,)]), ordered=False)}}
>>> pins.drift(right, QueryResult.from_rows(["m"], [(1,)]), "k2") is None
True
"""

from __future__ import annotations

import datetime as dt
import threading
from collections.abc import Mapping
from typing import Any

from score.comparison.result_hash import result_sha256 as pinned_sha256
from score.execution.result import QueryResult


def task_today(task: Mapping[str, Any]) -> dt.date | None:
    """The fixed today a task was verified under (None when none was fixed).

    >>> task_today({"today": "2025-12-31"}), task_today({"today": None})
    (datetime.date(2025, 12, 31), None)
    """
    value = task.get("today")
    return dt.date.fromisoformat(value) if value else None


def pinned_hash(task: Mapping[str, Any]) -> str | None:
    """The gold result hash a task was verified with (None for an unanswerable task)."""
    gold = task.get("gold_result")
    return gold.get("sha256") if isinstance(gold, Mapping) else None


class GoldPins:
    """Checks gold results against their tasks' pinned hashes; thread-safe."""

    def __init__(self) -> None:
        self._hashes: dict[tuple[str, bool], str] = {}
        self._lock = threading.Lock()

    def actual(self, result: QueryResult, key: str, *, ordered: bool) -> str:
        """The hash of ``result`` (the gold cache's ``key`` names it), computed once."""
        memo = (key, ordered)
        with self._lock:
            found = self._hashes.get(memo)
        if found is None:
            found = pinned_sha256(result, ordered=ordered)
            with self._lock:
                self._hashes[memo] = found
        return found

    def drift(self, task: Mapping[str, Any], result: QueryResult, key: str) -> str | None:
        """The reason of a ``gold_drift``, or None when the result is the one pinned (or
        the task pins none: every task read by :func:`score.inputs.task_set.load_tasks` does)."""
        expected = pinned_hash(task)
        if expected is None:
            return None
        actual = self.actual(result, key, ordered=bool(task.get("order_matters")))
        if actual == expected:
            return None
        return (
            f"the gold result on this database has sha256 {actual}, the task was verified "
            f"with {expected}: the database or the engine is not the one it was verified on"
        )


def today_conflicts(tasks: list[Mapping[str, Any]], today: dt.date | None) -> dict[str, list[str]]:
    """Days (ISO) other than ``today`` that tasks were verified under -> their ids; empty
    when ``today`` is None (each task then runs under its own) or agrees with every task.

    >>> today_conflicts([{"id": "a", "today": "2025-12-31"}, {"id": "b", "today": None}],
    ...                 dt.date(2026, 1, 1))
    {'2025-12-31': ['a']}
    """
    if today is None:
        return {}
    found: dict[str, list[str]] = {}
    for task in tasks:
        pinned = task_today(task)
        if pinned is not None and pinned != today:
            found.setdefault(pinned.isoformat(), []).append(task["id"])
    return found


def pinned_gold(task: Mapping[str, Any], result: QueryResult) -> QueryResult | str | None:
    """The task's gold result as its pin stands for it, taken without running the gold.

    The pin is a hash, so it gives the gold back only where ``result`` has it: a result
    whose hash is the pinned one is the gold result (values as the hash sees them), with
    the pinned column names and types; any other result is not, and the reason says so.
    None when the task pins no result (its gold must run).

    >>> one = QueryResult.from_rows(["x"], [(0,)])
    >>> task = {"order_matters": False, "gold_result": {"columns": ["n"], "types": ["BIGINT"],
    ...         "sha256": pinned_sha256(one, ordered=False)}}
    >>> pinned_gold(task, one).columns
    ('n',)
    >>> pinned_gold(task, QueryResult.from_rows(["x"], [(1,)]))[:48]
    'the result is not the gold result the task pins '
    >>> pinned_gold({"gold_result": None}, one) is None
    True
    """
    expected = pinned_hash(task)
    if expected is None:
        return None
    pin = task["gold_result"]
    columns, types = pin.get("columns"), pin.get("types")
    actual = pinned_sha256(result, ordered=bool(task.get("order_matters")))
    if actual != expected or not columns or len(columns) != result.num_columns:
        return (
            f"the result is not the gold result the task pins (sha256 {expected}; this "
            f"result's is {actual}): decided from the pin, the gold was not run"
        )
    if not types or len(types) != len(columns):
        types = result.types
    table = result.table.rename_columns([str(c) for c in columns])
    return QueryResult(tuple(columns), tuple(types), table)
