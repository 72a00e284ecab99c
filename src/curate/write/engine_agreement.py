"""Which tasks give the same gold result here as in a task file verified elsewhere.

A maintainer who curates a source on another engine (``sqlgold curate --db
postgresql://...``) or on another copy of the data names the task file verified before
(``--against data/benchmark/omop_tasks.jsonl``); each task is then one of

* ``same``: kept in both, and its gold result has the same hash
(:mod:`score.comparison.result_hash`,
  defined on values, so the same on every engine);
* ``different``: kept in both, with another result here (a data or engine difference
  to look at; the ids are listed with both row counts);
* ``only_here`` / ``only_there``: kept in this run only, or in the other file only
  (dropped here: the report's records say why).

Unanswerable tasks have no gold result; they count as ``same`` when kept in both.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def engine_agreement(
    kept_here: Iterable[Mapping[str, Any]],
    tasks_there: Iterable[Mapping[str, Any]],
    *,
    against: str,
    fingerprint_there: str | None,
) -> dict[str, Any]:
    """The agreement of this run's kept tasks with another task file's.

    >>> here = [{"id": "a", "gold_result": {"sha256": "x", "rows": 1}},
    ...         {"id": "b", "gold_result": {"sha256": "y", "rows": 2}}, {"id": "c"}]
    >>> there = [{"id": "a", "gold_result": {"sha256": "x", "rows": 1}},
    ...          {"id": "b", "gold_result": {"sha256": "z", "rows": 3}}, {"id": "d"}]
    >>> found = engine_agreement(here, there, against="t.jsonl", fingerprint_there=None)
    >>> found["counts"]
    {'different': 1, 'only_here': 1, 'only_there': 1, 'same': 1}
    >>> found["different"], found["only_here"], found["only_there"]
    ([{'id': 'b', 'rows_here': 2, 'rows_there': 3}], ['c'], ['d'])
    """
    mine = {t["id"]: t.get("gold_result") for t in kept_here}
    theirs = {t["id"]: t.get("gold_result") for t in tasks_there}
    same, different = [], []
    for task_id in sorted(mine.keys() & theirs.keys()):
        a, b = mine[task_id], theirs[task_id]
        if (a or {}).get("sha256") == (b or {}).get("sha256"):
            same.append(task_id)
        else:
            rows_here, rows_there = (a or {}).get("rows"), (b or {}).get("rows")
            different.append({"id": task_id, "rows_here": rows_here, "rows_there": rows_there})
    only_here = sorted(mine.keys() - theirs.keys())
    only_there = sorted(theirs.keys() - mine.keys())
    return {
        "against": against,
        "fingerprint_there": fingerprint_there,
        "counts": {
            "different": len(different),
            "only_here": len(only_here),
            "only_there": len(only_there),
            "same": len(same),
        },
        "same": same,
        "different": different,
        "only_here": only_here,
        "only_there": only_there,
    }


def agreement_markdown(found: Mapping[str, Any], shown: int = 20) -> list[str]:
    """The report's section on the agreement (ids listed up to ``shown`` per kind)."""
    c = found["counts"]
    lines = [
        "## Agreement with another task file",
        "",
        f"Against `{found['against']}` (verified on data with fingerprint "
        f"`{found['fingerprint_there'] or 'unknown'}`): {c['same']} same gold result, "
        f"{c['different']} different, {c['only_here']} kept here only, "
        f"{c['only_there']} kept there only.",
        "",
    ]
    if found["different"]:
        lines += ["| id | rows here | rows there |", "| --- | ---: | ---: |"]
        lines += [
            f"| {d['id']} | {d['rows_here']} | {d['rows_there']} |"
            for d in found["different"][:shown]
        ]
        lines.append("")
    for key, label in (("only_here", "Kept here only"), ("only_there", "Kept there only")):
        ids = found[key]
        if ids:
            more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
            lines += [f"{label}: {', '.join(ids[:shown])}{more}.", ""]
    return lines
