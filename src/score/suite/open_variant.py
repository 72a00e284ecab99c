"""The variants a suite build is filling: candidates side by side, kills kept.

A candidate that tells some neighbour apart is put beside the candidates already in an
open variant (``merge_rows``) only if, loaded together in the trial database, every gold
still runs and every kill of each still holds (the rows of one do not mask another's).
Several variants are open at once: a candidate goes beside the first where it fits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from score.execution.result import QueryError
from score.suite.distill import NeighbourKey
from score.suite.query_runs import SuiteTask, on_trial, told_apart
from score.suite.trial_database import TrialDatabase
from score.suite.twins import largest_id
from score.suite.variant_data import Row, arrow_tables


@dataclass
class OpenVariant:
    """The variant being filled: candidates that each kill something, side by side."""

    rows: dict[str, list[dict[str, Any]]] | None = None
    kills: set[NeighbourKey] = field(default_factory=set)
    tasks: set[str] = field(default_factory=set)
    blocks: int = 0
    #: the number of the last candidate put in (names the variant until it is kept)
    last: int = -1

    def add(
        self,
        rows: dict[str, list[dict[str, Any]]],
        aim: str,
        kills: Sequence[NeighbourKey],
        n: int,
    ) -> None:
        self.rows = rows
        self.kills |= set(kills)
        self.tasks.add(aim)
        self.blocks += 1
        self.last = n

    def reset(self) -> None:
        self.rows, self.kills, self.tasks, self.blocks, self.last = None, set(), set(), 0, -1


def place(
    trial: TrialDatabase,
    blocks: Sequence[OpenVariant],
    rows: dict[str, list[dict[str, Any]]],
    aim: str,
    new: Sequence[NeighbourKey],
    n: int,
    found: Mapping[str, SuiteTask],
    schemas: Mapping[str, Any],
    profile: str,
) -> OpenVariant | None:
    """Put candidate ``n`` (its ``rows`` kill ``new``) beside the blocks of the first open
    variant where every kill, its own and theirs, still holds, and return that variant;
    None if there is none."""
    for block in blocks:
        if block.rows is None:
            continue
        merged = merge_rows(block.rows, rows)
        trial.load(arrow_tables(merged, schemas))
        if _still_kills(trial, block.tasks | {aim}, block.kills | set(new), found, profile):
            block.add(merged, aim, new, n)
            return block
    return None


def _still_kills(
    trial: TrialDatabase,
    tasks: set[str],
    kills: set[NeighbourKey],
    found: Mapping[str, SuiteTask],
    profile: str,
) -> bool:
    """Whether, in the trial database as loaded, every gold of ``tasks`` runs and every
    neighbour of ``kills`` is still told apart (the blocks side by side mask nothing)."""
    run = on_trial(trial)
    items = [found[t] for t in sorted(tasks)]
    golds = run([i.gold_query for i in items])  # type: ignore[misc]
    if any(isinstance(g, QueryError) for g in golds):
        return False
    by_task = {i.task["id"]: g for i, g in zip(items, golds, strict=True)}
    keys = sorted(kills)
    return len(told_apart(run, keys, found, by_task, profile)) == len(keys)  # type: ignore[arg-type]


def merge_rows(a: Mapping[str, list[Row]], b: Mapping[str, list[Row]]) -> dict[str, list[Row]]:
    """One database holding two variants' rows side by side: ``b``'s persons whose id ``a``
    holds too given fresh ids (the others, a gold's named persons among them, kept), its
    rows' own ids and its visit references shifted past ``a``'s, locations kept once each.

    >>> a = {"person": [{"person_id": 1}, {"person_id": 296377155196858}]}
    >>> b = {"person": [{"person_id": 296377155196858}, {"person_id": 7}]}
    >>> [r["person_id"] for r in merge_rows(a, b)["person"]]
    [1, 296377155196858, 8, 7]
    """
    persons = _fresh_persons(a.get("person", []), b.get("person", []))
    visits = largest_id(a.get("visit_occurrence", []), "visit_occurrence_id")
    details = largest_id(a.get("visit_detail", []), "visit_detail_id")
    out: dict[str, list[Row]] = {}
    for table in sorted(set(a) | set(b)):
        mine, theirs = list(a.get(table, [])), b.get(table, [])
        if table == "location":
            known = {r["location_id"] for r in mine}
            out[table] = mine + [r for r in theirs if r["location_id"] not in known]
            continue
        own = f"{table}_id"
        shift = largest_id(mine, own) if table != "person" else 0
        for row in theirs:
            row = dict(row)
            if row.get("person_id") is not None:
                row["person_id"] = persons.get(row["person_id"], row["person_id"])
            if own in row and row[own] is not None and table != "person":
                row[own] += shift
            if table != "visit_occurrence" and row.get("visit_occurrence_id") is not None:
                row["visit_occurrence_id"] += visits
            if table != "visit_detail" and row.get("visit_detail_id") is not None:
                row["visit_detail_id"] += details
            mine.append(row)
        out[table] = mine
    return out


def _fresh_persons(mine: Sequence[Row], theirs: Sequence[Row]) -> dict[int, int]:
    """``theirs``' person ids that ``mine`` holds too -> a fresh id each, past the small ids
    of both (a gold's named persons may be 64-bit ids: nothing is added to them)."""
    held = {r["person_id"] for r in mine}
    taken = held | {r["person_id"] for r in theirs}
    small = [i for i in taken if i < 2**31]
    fresh = max(small, default=0)
    out = {}
    for row in theirs:
        if row["person_id"] in held:
            fresh += 1
            while fresh in taken:
                fresh += 1
            out[row["person_id"]] = fresh
    return out
