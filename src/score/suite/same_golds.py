"""Tasks that ask one gold: a benchmark asks a gold in several wordings (TEXT-TO-OMOP asks
180 in 900 answerable tasks), and suite build runs each gold and its near misses once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def gold_key(task: Mapping[str, Any]) -> tuple[str, str | None, bool]:
    """What makes two tasks' golds one for the build: the same SQL, run on the same day,
    compared with the same order rule (a benchmark asks one gold in several wordings)."""
    return (task["gold_sql"], task.get("today"), bool(task["order_matters"]))


def same_golds(tasks: Sequence[Mapping[str, Any]]) -> dict[tuple, list[Mapping[str, Any]]]:
    """The tasks grouped by :func:`gold_key`, in the order each gold first appears: the
    build runs each gold and its near misses once, for the first task that asks it.

    >>> a = {"id": "a", "gold_sql": "SELECT 1", "order_matters": False}
    >>> b = {"id": "b", "gold_sql": "SELECT 2", "order_matters": False}
    >>> [[t["id"] for t in g] for g in same_golds([a, b, {**a, "id": "a2"}]).values()]
    [['a', 'a2'], ['b']]
    """
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    for task in tasks:
        groups.setdefault(gold_key(task), []).append(task)
    return groups
