"""A candidate variant confirmed through the executor, the path scoring takes.

A candidate that told a near miss apart in the trial database (:mod:`score.suite.trial_database`)
is written, made a DuckDB database and run again here: every gold must run, the kills are
those the executor confirms, and each task's reference answer is checked against its gold
(:mod:`score.suite.reference_check`).  What the suite keeps is decided here, in
:func:`keep_candidate`, which every kind of candidate goes through.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa

from score.execution.executor import Executor
from score.execution.result import QueryResult
from score.execution.settings import ExecutorSettings
from score.suite.distill import Distillation, NeighbourKey
from score.suite.query_runs import SuiteTask, golds_run, on_executor, open_orders, told_apart
from score.suite.reference_check import references_differ
from score.suite.same_golds import gold_key
from score.suite.suite_file import (
    DATA,
    Variant,
    data_sha256,
    variant_files,
    write_duckdb,
    write_tables,
)


@dataclass
class BuildState:
    """What a suite build has found and kept so far, and where it writes: the tasks it
    runs (their golds and neighbours), the reference answers it checks, the distillation,
    the golds that failed on a candidate, the drops and the variants on which each task's
    gold and reference answer differ, the variants kept, the suite's staging folder and
    the folder its candidates' databases are made in."""

    found: Mapping[str, SuiteTask]
    answerable: Sequence[Mapping[str, Any]]
    distillation: Distillation
    gold_failures: dict[str, list[str]]
    drops: dict[str, str]
    differ_on: dict[str, list[str]]
    variants: list[Variant]
    staging: Path
    cache: Path
    ex_settings: ExecutorSettings
    jobs: int
    profile: str


def keep_candidate(
    state: BuildState,
    tables: Mapping[str, pa.Table],
    candidate: str,
    screened: Sequence[NeighbourKey],
    *,
    refuse_disagreement: bool = False,
) -> Variant | None:
    """Write candidate ``tables`` (and the shared vocabulary tables it holds no copy of),
    confirm it (:func:`confirm_candidate`) and, if kept, name it the next variant
    (``v01``, ...) everywhere the build named the candidate; the variant, or None (its
    folder removed)."""
    folder = state.staging / DATA / candidate
    write_tables(folder, tables)
    database = state.cache / f"{candidate}.duckdb"
    write_duckdb(database, variant_files(state.staging, candidate))
    kept = confirm_candidate(
        state, database, candidate, screened, refuse_disagreement=refuse_disagreement
    )
    database.unlink()
    if kept is None:
        shutil.rmtree(folder)
        return None
    name = f"v{len(state.variants) + 1:02d}"
    folder.rename(state.staging / DATA / name)
    variant = Variant(
        name,
        state.staging / DATA / name,
        data_sha256(variant_files(state.staging, name)),
        kept,
        {t: tables[t].num_rows for t in sorted(tables)},
    )
    state.variants.append(variant)
    state.distillation.rename(candidate, name)
    for tid, why in state.drops.items():
        state.drops[tid] = why.replace(f"variant {candidate}:", f"variant {name}:")
        state.differ_on[tid] = [name if v == candidate else v for v in state.differ_on[tid]]
    return variant


def confirm_candidate(
    state: BuildState,
    database: Path,
    candidate: str,
    screened: Sequence[NeighbourKey],
    *,
    refuse_disagreement: bool = False,
) -> str | None:
    """Run the screened candidate through the executor, as scoring will: every gold
    must run, the kills are those the executor confirms, and the reference answers are
    checked (a task whose two differ here is dropped, ``drops``, and this candidate is
    named in ``differ_on``, if kept; with ``refuse_disagreement`` the candidate is not
    kept instead); its fingerprint if kept."""
    found, answerable, distillation = state.found, state.answerable, state.distillation
    jobs, profile = state.jobs, state.profile
    items = list(found.values())
    with Executor(database, settings=state.ex_settings) as ex:
        run = on_executor(ex, jobs)
        by_task: dict[str, QueryResult] = {}
        if not golds_run(run, items, by_task, candidate, state.gold_failures, distillation):
            return None
        others = [k for k in distillation.wanted() if k not in set(screened)]
        open_order = open_orders(ex, found, by_task)

        differ = references_differ(ex, answerable, by_task, candidate, profile, jobs)
        if differ and refuse_disagreement:
            distillation.reject(candidate, "a reference answer differs from its gold on it")
            return None
        killed = told_apart(run, [*screened, *others], found, by_task, profile, open_order)
        # where a task's gold and reference answer differ, one of them is wrong: scoring
        # judges the task's answers only where the two agree, so a kill here is none
        # (a gold asked in several tasks is judged here for all of them)
        wrong = {gold_key(t) for t in answerable if t["id"] in differ}
        if not distillation.offer(
            candidate, [k for k in killed if gold_key(found[k[0]].task) not in wrong]
        ):
            return None
        for item in items:
            item.rows_on_variants.append(by_task[item.task["id"]].num_rows)
        for tid, why in differ.items():
            state.drops.setdefault(tid, why)
            state.differ_on.setdefault(tid, []).append(candidate)
        return ex.fingerprint
