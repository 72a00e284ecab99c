"""Variants a suite can do without: another kept variant tells apart all they do.

The build keeps a variant only if it kills a near miss still alive when it is confirmed,
but a later variant, filled with more candidates, may kill every near miss an earlier
one killed.  Scoring runs every answer right on the base database on every variant, so
each variant the suite keeps costs every scoring.  Once the build is done, the near
misses credited to the variants that kill fewest (:func:`_weakest_kills`) run on every
kept variant; the variants kept are then the others and the fewest of those weakest a
greedy cover finds (:func:`covering`: the one that tells apart most of what is still
uncovered first, ties to the earlier) that still tell apart every one of them and give
every gold that returns rows on some variant rows on one of them.  A variant on which a
task's gold and reference answer differ is always kept (the manifest names it), and so
is the first while a vocabulary variant is kept (it holds the first's clinical rows, so
scoring judges an answer that names no table it changed on the first for both).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Hashable, Mapping, Sequence
from pathlib import Path
from typing import Any

from score.execution.executor import Executor
from score.execution.result import QueryResult
from score.execution.settings import ExecutorSettings
from score.suite.distill import Distillation, NeighbourKey
from score.suite.query_runs import SuiteTask, on_executor, open_orders, told_apart
from score.suite.same_golds import gold_key
from score.suite.suite_file import DATA, Variant, data_sha256, variant_files, write_duckdb

#: the share of all kills the variants that may be dropped hold at most (the weakest):
#: running every kill on every variant would cost a build of TEXT-TO-OMOP's file 100 s
WEAKEST_SHARE = 0.1


def covering(
    covers: Mapping[str, set[Hashable]], order: Sequence[str], keep: set[str] = frozenset()
) -> list[str]:
    """The variants (in ``order``) a greedy cover of everything ``covers`` holds keeps:
    ``keep`` first, then, while something is uncovered, the variant covering most of it
    (the earlier of a tie).

    >>> covering({"v1": {1, 2}, "v2": {2, 3}, "v3": {1, 2, 3}}, ["v1", "v2", "v3"])
    ['v3']
    >>> covering({"v1": {1}, "v2": {2}, "v3": {1, 2}}, ["v1", "v2", "v3"], keep={"v1"})
    ['v1', 'v2']
    """
    chosen = [v for v in order if v in keep]
    left = set().union(*covers.values()) - set().union(*(covers[v] for v in chosen))
    while left:
        best = max(order, key=lambda v: (len(covers[v] & left), -order.index(v)))
        if not covers[best] & left:
            break
        chosen.append(best)
        left -= covers[best]
    return [v for v in order if v in chosen]


def drop_redundant(
    variants: Sequence[Variant],
    found: Mapping[str, SuiteTask],
    answerable: Sequence[Mapping[str, Any]],
    distillation: Distillation,
    drops: dict[str, str],
    differ_on: dict[str, list[str]],
    staging: Path,
    cache: Path,
    ex_settings: ExecutorSettings,
    *,
    jobs: int,
    profile: str,
) -> list[Variant]:
    """The variants of ``variants`` a greedy cover keeps (see the module), renamed
    ``v01``... in their order; the others' folders removed, and the distillation's
    kills, the drops' reasons, ``differ_on`` and each task's rows per variant renamed
    and narrowed to match."""
    if len(variants) < 2:
        return list(variants)
    killed = _weakest_kills(distillation.killed_by)
    if not killed:  # no variant may be dropped: none is written and opened to find out
        return list(variants)
    covers: dict[str, set[Hashable]] = {}
    for index, variant in enumerate(variants):
        kills = _kills(
            variant,
            killed,
            found,
            answerable,
            differ_on,
            staging,
            cache,
            ex_settings,
            jobs,
            profile,
        )
        rows = {("rows", tid) for tid, item in found.items() if item.rows_on_variants[index] > 0}
        covers[variant.name] = kills | rows
    order = [v.name for v in variants]
    keep = {name for names in differ_on.values() for name in names}
    weakest = {distillation.killed_by[k] for k in killed}
    keep |= {name for name in order if name not in weakest}
    if any(v.own_vocabulary for v in variants):
        keep.add(order[0])
    reached = set().union(*covers.values())
    keep |= {by for key, by in distillation.killed_by.items() if key not in reached}
    chosen = covering(covers, order, keep)
    if len(chosen) == len(order):
        return list(variants)
    kept = [i for i, name in enumerate(order) if name in chosen]
    names = {order[i]: f"v{n + 1:02d}" for n, i in enumerate(kept)}
    for name in order:
        if name not in names:
            shutil.rmtree(staging / DATA / name)
    for old in names:  # two steps: a new name may be another's old one
        (staging / DATA / old).rename(staging / DATA / f"{old}.keep")
    for old, new in names.items():
        (staging / DATA / f"{old}.keep").rename(staging / DATA / new)
    for key in list(distillation.killed_by):
        by = next(v for v in chosen if key in covers[v] or distillation.killed_by[key] == v)
        distillation.killed_by[key] = names[by]
    distillation.kept = [names[v] for v in chosen]
    for tid, why in drops.items():
        drops[tid] = re.sub(r"variant (\S+):", lambda m: f"variant {names.get(m[1], m[1])}:", why)
    for tid, listed in differ_on.items():
        differ_on[tid] = [names[v] for v in listed]
    for item in found.values():
        item.rows_on_variants[:] = [item.rows_on_variants[i] for i in kept]
    return [
        Variant(
            names[variants[i].name],
            staging / DATA / names[variants[i].name],
            data_sha256(variant_files(staging, names[variants[i].name])),
            variants[i].fingerprint,
            variants[i].rows,
        )
        for i in kept
    ]


def _weakest_kills(killed_by: Mapping[NeighbourKey, str]) -> list[NeighbourKey]:
    """The near misses credited to the variants that kill fewest, taken from the fewest
    up while they hold at most :data:`WEAKEST_SHARE` of the kills: only those variants
    may be dropped, so only their kills are run on every variant.

    >>> by = {("a", 0): "v1", ("a", 1): "v1", ("b", 0): "v2", ("c", 0): "v1"}
    >>> by |= {("d", i): "v1" for i in range(7)}
    >>> _weakest_kills(by)
    [('b', 0)]
    """
    credits: dict[str, list[NeighbourKey]] = {}
    for key, by in sorted(killed_by.items()):
        credits.setdefault(by, []).append(key)
    chosen: list[NeighbourKey] = []
    for name in sorted(credits, key=lambda v: (len(credits[v]), v)):
        if len(chosen) + len(credits[name]) > WEAKEST_SHARE * len(killed_by):
            break
        chosen += credits[name]
    return sorted(chosen)


def _kills(
    variant: Variant,
    keys: Sequence[NeighbourKey],
    found: Mapping[str, SuiteTask],
    answerable: Sequence[Mapping[str, Any]],
    differ_on: Mapping[str, Sequence[str]],
    staging: Path,
    cache: Path,
    ex_settings: ExecutorSettings,
    jobs: int,
    profile: str,
) -> set[Hashable]:
    """The near misses of ``keys`` that ``variant`` tells apart, run as scoring runs them
    (where its gold and reference answer differ, a task's are not counted)."""
    database = cache / f"{variant.name}.cover.duckdb"
    write_duckdb(database, variant_files(staging, variant.name))
    try:
        with Executor(database, settings=ex_settings) as ex:
            run = on_executor(ex, jobs)
            items = [found[t] for t in sorted({k[0] for k in keys})]
            by_task: dict[str, QueryResult] = {}
            for item, gold in zip(items, run([i.gold_query for i in items]), strict=True):
                if isinstance(gold, QueryResult):
                    by_task[item.task["id"]] = gold
            open_order = open_orders(ex, found, by_task)

            wrong = {gold_key(t) for t in answerable if variant.name in differ_on.get(t["id"], ())}
            ready = [k for k in keys if k[0] in by_task and gold_key(found[k[0]].task) not in wrong]
            return set(told_apart(run, ready, found, by_task, profile, open_order))
    finally:
        database.unlink(missing_ok=True)
