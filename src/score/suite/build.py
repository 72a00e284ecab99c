"""``sqlgold suite build``: a test suite for a task set, from its golds and a base database.

1. Every gold runs on the base database, then each of its neighbours
   (:mod:`score.suite.neighbours`); a neighbour the database cannot read is left out, one
   stopped at a limit counts as a wrong answer, and one that returns the gold's result
   there is *alive* (execution accuracy would accept it).
2. Candidate variants are made one by one (:mod:`score.suite.variant_data`, seeded
   ``<seed>:<n>``, each aimed at one task with a neighbour alive, in turn) and screened in
   this process (:mod:`score.suite.trial_database`): the aimed gold must run, and one of
   its alive neighbours must return another result.  Candidates that pass are put side by
   side in one variant (``blocks_per_variant``) as long as every kill still holds there;
   ``OPEN_VARIANTS`` (eight) variants are filled at once, a candidate going beside the
   first it fits, and when it fits none the fullest is closed.
3. A full variant is written and run through the executor, as scoring runs it: every
   gold must run there, the kills are those the executor confirms, among all neighbours
   still alive (:mod:`score.suite.distill`), and the reference answers run too: a task
   whose gold and reference answer differ there is listed in the manifest's ``drops``
   (``curate --suite`` drops it).  It stops when no neighbour is left to try,
   ``max_databases`` are kept, or ``max_candidates`` were made.
4. Then vocabulary variants (:mod:`score.suite.vocabulary_phase`: the first kept
   variant's clinical rows with a vocabulary of their own) for the near misses still
   alive whose gold reads a vocabulary table, screened and confirmed the same way, and
   kept only where every reference answer still returns its gold's result.
5. The near misses credited to the variants that kill fewest run on every kept
   variant, and of those variants the suite keeps the fewest a greedy cover finds that
   still tell apart all of them (:mod:`score.suite.redundant`): scoring pays for every
   variant.
6. The suite is written to a folder beside the target and renamed into place whole.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from score.execution.executor import Executor, PreparedQuery
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings
from score.inputs.task_manifest import set_hash
from score.suite.base_data import read_base
from score.suite.build_settings import BuildSettings
from score.suite.confirm import BuildState, keep_candidate
from score.suite.distill import Distillation, NeighbourKey
from score.suite.neighbours import neighbours
from score.suite.open_variant import OpenVariant, place
from score.suite.palette import EXACT
from score.suite.query_runs import (
    SuiteTask,
    error_text,
    golds_run,
    on_trial,
    prepare_many,
    run_prepared,
    same_result,
    today_of,
    told_apart,
)
from score.suite.redundant import drop_redundant
from score.suite.same_golds import same_golds
from score.suite.suite_file import (
    DATA,
    MANIFEST,
    VOCABULARY,
    SuiteError,
    Variant,
    manifest_text,
    replace_folder,
    write_tables,
)
from score.suite.suite_report import build_report, report_markdown
from score.suite.trial_database import TrialDatabase
from score.suite.variant_data import RowsDoNotFit, arrow_tables, variant_rows
from score.suite.vocabulary_bound import vocabulary_bound
from score.suite.vocabulary_phase import vocabulary_phase

#: ``progress(done, total, stage=..., note=..., eta=...)``: the stage under way (its own
#: count), a note on where the build stands, and whether the total is the count's end
#: (``eta``) or only its bound (the candidates: the build stops once its variants are
#: found, most often well before ``--max-candidates``)
Progress = Callable[..., None]
#: variants filled at once (a candidate is put beside the blocks of the first it fits)
OPEN_VARIANTS = 8
#: how a neighbour that is valid SQL can still fail on the base database
RAN_BUT_FAILED = frozenset({"timeout", "row_cap", "runtime_error"})


def build_suite(
    tasks: Sequence[Mapping[str, Any]],
    base_db: str | Path,
    out: str | Path,
    settings: BuildSettings,
    *,
    progress: Progress | None = None,
    executor_settings: ExecutorSettings | None = None,
    schema: str | None = None,
) -> dict[str, Any]:
    """Build the suite of ``tasks`` on ``base_db`` into the folder ``out`` (replaced
    whole at the end, or left as it was on any error); return the report."""
    out = Path(out)
    answerable = [t for t in tasks if t.get("gold_sql")]
    if not answerable:
        raise SuiteError("no task with a gold SQL to build a suite for")
    # one DuckDB thread: a near miss without a total order (LIMIT over ties) must give
    # the same rows on every build, or the variants kept would depend on scheduling
    ex_settings = replace(executor_settings or ExecutorSettings(), threads=1)
    staging = Path(
        tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent if out.parent.exists() else None)
    )
    try:
        report = _build(
            answerable, tasks, Path(base_db), schema, staging, settings, ex_settings, progress
        )
        replace_folder(staging, out)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def _base_phase(
    executor: Executor, answerable: Sequence[Mapping[str, Any]], s: BuildSettings, tick: Callable
) -> dict[str, SuiteTask]:
    prepared = prepare_many(executor, [(t["gold_sql"], today_of(t)) for t in answerable], s.jobs)
    found: dict[str, SuiteTask] = {}
    for task, query in zip(answerable, prepared, strict=True):
        tick()
        gold = executor.run(query) if isinstance(query, PreparedQuery) else query
        if isinstance(gold, QueryError):
            raise SuiteError(
                f"the gold fails on the base database: {error_text(gold)}",
                task_id=task["id"],
            )
        item = SuiteTask(
            task,
            gold,
            neighbours(task["gold_sql"], order_matters=bool(task["order_matters"])),
            [],
            set(),
            query,  # type: ignore[arg-type]
        )
        found[task["id"]] = item
        queries = prepare_many(executor, [(n.sql, today_of(task)) for n in item.neighbours], s.jobs)
        ready = {i: q for i, q in enumerate(queries) if isinstance(q, PreparedQuery)}
        results = run_prepared(executor, list(ready.values()), s.jobs)
        for i, r in zip(ready, results, strict=True):
            # a neighbour that stops at a limit is a wrong answer that ran; one the
            # database cannot read is no near miss (and which one ran does not hang on
            # how fast the machine was)
            if isinstance(r, QueryResult) or r.kind in RAN_BUT_FAILED:
                item.ran_on_base.append(i)
            if isinstance(r, QueryResult) and same_result(task, gold, r, s.profile):
                item.alive.add(i)
                item.queries[i] = ready[i]
    return found


def _build(
    answerable: Sequence[Mapping[str, Any]],
    tasks: Sequence[Mapping[str, Any]],
    base_db: Path,
    schema: str | None,
    staging: Path,
    s: BuildSettings,
    ex_settings: ExecutorSettings,
    progress: Progress | None,
) -> dict[str, Any]:
    groups = same_golds(answerable)
    distinct = [members[0] for members in groups.values()]
    done = [0]

    def tick() -> None:  # one gold and its neighbours run on the base database
        done[0] += 1
        if progress:
            progress(done[0], len(distinct), stage="golds and near misses")

    with Executor(base_db, schema, settings=ex_settings) as base:
        base_fingerprint = base.fingerprint
        found = _base_phase(base, distinct, s, tick)
    today = ex_settings.today or dt.date.today()
    filled, pools, schemas, vocabulary, focus = read_base(base_db, schema, distinct, today)
    write_tables(staging / DATA / VOCABULARY, vocabulary)
    alive: set[NeighbourKey] = {(tid, i) for tid, item in found.items() for i in item.alive}
    distillation = Distillation(set(alive), s.max_databases, s.patience)
    gold_failures: dict[str, list[str]] = {}
    variants: list[Variant] = []
    drops: dict[str, str] = {}
    differ_on: dict[str, list[str]] = {}  # task dropped -> the variants where it differs
    cache = staging / ".databases"
    state = BuildState(
        found,
        answerable,
        distillation,
        gold_failures,
        variants=variants,
        drops=drops,
        differ_on=differ_on,
        staging=staging,
        cache=cache,
        ex_settings=ex_settings,
        jobs=s.jobs,
        profile=s.profile,
    )
    trial = TrialDatabase(
        vocabulary,
        timeout_seconds=ex_settings.timeout_seconds,
        max_rows=ex_settings.max_rows,
        collation=ex_settings.collation,
    )
    # variants being filled: a candidate that does not fit beside one's blocks may fit
    # beside another's, so fewer, fuller variants are kept (scoring pays per variant)
    blocks = [OpenVariant() for _ in range(OPEN_VARIANTS)]

    def close(block: OpenVariant) -> None:
        """Confirm an open variant through the executor and keep it if it kills."""
        if block.rows is None:
            return
        candidate = f"c{block.last:04d}"  # named for its last block
        keep_candidate(state, arrow_tables(block.rows, schemas), candidate, sorted(block.kills))
        block.reset()

    tried = 0
    try:
        for n in range(s.max_candidates):
            if len(distillation.kept) >= s.max_databases:
                break
            # each candidate aims at one task with a neighbour alive, in turn: its gold's
            # constants lead the palettes
            wanted = [k for k in distillation.wanted() if not any(k in b.kills for b in blocks)]
            targets = sorted({t for t, _ in wanted})
            if not targets:
                break
            tried = n + 1
            if progress:
                progress(
                    tried,
                    s.max_candidates,
                    stage="candidates",
                    note=f"{len(distillation.kept)} of at most {s.max_databases} variants kept; "
                    f"near misses left: {len(distillation.alive)}",
                    eta=False,
                )
            aim = targets[n % len(targets)]
            # a gold that returns nothing on the base database: now and then a candidate
            # holding just the rows it asks for
            exact = EXACT if found[aim].gold_base.num_rows == 0 else 0.0
            rows = variant_rows(pools, filled, f"{s.seed}:{n}", focus[aim], exact)
            keys = [k for k in wanted if k[0] == aim]
            try:
                trial.load(arrow_tables(rows, schemas))
            except RowsDoNotFit as e:  # a value no column of the CDM's type holds
                distillation.reject(f"c{n:04d}", str(e))
                distillation.tried(keys)
                continue
            new = _screen(trial, f"c{n:04d}", aim, keys, found, distillation, gold_failures, s)
            distillation.tried(keys)
            if not new:
                continue
            beside = place(trial, blocks, rows, aim, new, n, found, schemas, s.profile)
            if beside is not None:
                if beside.blocks >= s.blocks_per_variant:
                    close(beside)
                continue
            empty = next((b for b in blocks if b.rows is None), None)
            if empty is None:  # it fits beside neither: the fuller one is kept as it is
                empty = max(blocks, key=lambda b: b.blocks)
                close(empty)
            empty.add(rows, aim, new, n)
        for block in blocks:
            if len(distillation.kept) < s.max_databases:
                close(block)
        tried += vocabulary_phase(vocabulary, state, s, progress)
        # the fewest of them that still tell apart all they do
        variants[:] = drop_redundant(
            variants,
            found,
            answerable,
            distillation,
            drops,
            differ_on,
            staging,
            cache,
            ex_settings,
            jobs=s.jobs,
            profile=s.profile,
        )
    finally:
        trial.close()
    shutil.rmtree(cache, ignore_errors=True)
    survivors = sorted(k for k in distillation.alive if not found[k[0]].neighbours[k[1]].equivalent)
    flags = vocabulary_bound(
        base_db,
        schema,
        [(found[t].task["gold_sql"], found[t].neighbours[i].sql) for t, i in survivors],
        vocabulary,
    )
    bound = {k for k, flag in zip(survivors, flags, strict=True) if flag}
    report = build_report(
        found,
        distillation,
        alive,
        gold_failures,
        drops,
        variants,
        s.as_dict(),
        tried,
        bound,
        {members[0]["id"]: [t["id"] for t in members[1:]] for members in groups.values()},
    )
    (staging / MANIFEST).write_text(
        manifest_text(
            task_set_sha256=set_hash(tasks),
            base_fingerprint=base_fingerprint,
            seed=s.seed,
            settings=s.as_dict(),
            variants=variants,
            drops=drops,
            differ_on=differ_on,
        ),
        encoding="utf-8",
    )
    (staging / "report.json").write_text(
        json.dumps(report, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (staging / "report.md").write_text(report_markdown(report), encoding="utf-8")
    return report


def _screen(
    trial: TrialDatabase,
    candidate: str,
    aim: str,
    keys: Sequence[NeighbourKey],
    found: Mapping[str, SuiteTask],
    distillation: Distillation,
    gold_failures: dict[str, list[str]],
    s: BuildSettings,
) -> list[NeighbourKey]:
    """The neighbours among ``keys`` (the aimed task's) that the candidate loaded in
    the trial database tells apart from their gold; [] if the gold fails there."""
    run = on_trial(trial)
    by_task: dict[str, QueryResult] = {}
    if not golds_run(run, [found[aim]], by_task, candidate, gold_failures, distillation):
        return []
    return told_apart(run, keys, found, by_task, s.profile)
