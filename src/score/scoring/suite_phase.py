"""Scoring with a test suite: an instance right on the base database is run on every
variant of the suite too, and is ``correct`` only if it matches its gold on all of them.

The base scoring (:mod:`score.scoring.pipeline`) leaves each record with
``base_correct`` (its verdict on the base database) and ``suite`` None (not yet
judged).  :func:`judge_with_suite` then settles every such record:

* an instance not right on the base database, an unanswerable one (nothing to run) and
  one of a task the suite drops, from a suite built before
  :attr:`~score.suite.suite_file.Suite.differ_on` (its gold and reference answer
  disagree on a variant) are judged by the base database alone; the record says which
  and why (:mod:`score.scoring.suite_verdicts`);
* one of a task the suite drops runs on the variants where its gold and reference
  answer agree (where one of them is wrong, neither judges);
* one that, like its gold, reads vocabulary tables only runs on the first variant and
  on each vocabulary variant (:mod:`score.suite.vocabulary_variants`) alone: every other
  variant holds the first's vocabulary (the base database's rows and the suite's local
  concepts, :mod:`score.suite.local_concepts`), so each would return there what the
  first does; and one that, like its gold, names none of the vocabulary tables a
  vocabulary variant changed is not run on it when it holds the first variant's clinical
  rows (as a build makes it): it returns there what it returns on the first, which
  judges it for both (it matched on both, or its gold failed on both);
* the others run on the variants in turns (variant-major: with one job, as many
  variants at once as a variant would have lanes (:func:`variant_lanes`), each judged by
  one query process; the next turn's executors are opened, and their golds' cached
  results read, while this one's are used, by :func:`opened_in_turn`), each with the
  same comparator profile and order rule as on the base database.  The first variant
  on which the prediction's result differs from the gold's (or the prediction fails)
  tells them apart: the instance becomes ``mismatch``, with that variant named, and is
  judged by no later variant (what a later variant of the same turn found is set
  aside).  A gold that fails on a variant leaves that variant out of the
  instance's verdict (named in the record).

Gold results on a variant are cached like the base ones (:class:`GoldCache`, keyed by
the variant's fingerprint).  A variant whose database is not the one the manifest
fingerprints is refused (:class:`~score.suite.suite_file.SuiteError` naming it).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from score.execution.executor import Executor, ExecutorSettings
from score.files import file_sha256
from score.inputs.predictions import PredictionSet
from score.inputs.task_manifest import set_hash
from score.scoring.gold_cache import GOLD_DIALECT, GoldCache
from score.scoring.gold_pin import task_today
from score.scoring.suite_verdicts import (
    settle,
    verdict,
    vocabulary_alone,
    without_variants,
)
from score.scoring.variant_pass import Check, OnVariant, variant_pass
from score.scoring.variant_turns import opened_in_turn
from score.suite.suite_file import (
    MANIFEST,
    Suite,
    SuiteError,
    Variant,
    check_suite_for,
    read_suite,
    variant_database,
)
from score.suite.vocabulary_bound import names_vocabulary, reads_only_vocabulary
from score.suite.vocabulary_variants import same_clinical_rows, vocabulary_changes

#: The schema a variant's tables are in.
VARIANT_SCHEMA = "cdm"
#: The folder of the gold cache's folder holding the variants' DuckDB databases.
SUITE_DATABASES = "suites"

#: The most query processes one variant's predictions are shared among (one job).
MAX_LANES = 4


def suite_meta(suite: Suite) -> dict[str, Any]:
    """What run.json and the summary say of the suite a run was scored with."""
    return {
        "path": str(suite.folder),
        "manifest_sha256": file_sha256(suite.folder / MANIFEST),
        "variants": len(suite.variants),
        "dropped_tasks": len(suite.drops),
    }


def open_suite(
    folder: str | Path,
    tasks: Iterable[dict[str, Any]],
    executor: Executor,
    predictions: PredictionSet,
) -> Suite:
    """The suite in ``folder``, refused unless built for ``tasks`` (the whole task set,
    by its set hash) on the base database ``executor`` opens, and unless every
    prediction can run on a variant (a result CSV cannot)."""
    suite = read_suite(folder)
    check_suite_for(suite, task_set_sha256=set_hash(tasks), base_fingerprint=executor.fingerprint)
    csv = sorted(p.task_id for p in predictions.by_key.values() if p.kind == "csv")
    if csv:
        raise SuiteError(
            f"{len(csv)} prediction(s) are result CSVs (e.g. {csv[0]}), which cannot run on "
            "the suite's databases: score them without --suite",
            path=str(folder),
        )
    return suite


def open_variant(
    suite: Suite, variant: Variant, settings: ExecutorSettings, databases: Path, lanes: int = 1
) -> Executor:
    """The executor of one variant, its database made in ``databases`` on first use and
    its fingerprint checked against the manifest's, with ``lanes`` query processes
    started; DuckDB runs each of its queries on one thread (see :func:`variant_lanes`).
    A database made earlier that is not the manifest's (changed in the cache) is made
    again from the data once; a fresh one that is not is an error naming the variant."""
    settings = replace(settings, threads=1)  # tens of rows a table: one thread is faster
    for attempt in (1, 2):
        path = variant_database(suite, variant, databases)
        executor = Executor(path, VARIANT_SCHEMA, settings)
        try:
            found = executor.fingerprint
            if found == variant.fingerprint:
                # one per lane, started here (ahead of the variant's turn), not by its pass
                executor.start_workers(lanes)
        except BaseException:
            executor.close()
            raise
        if found == variant.fingerprint:
            return executor
        executor.close()
        if attempt == 1:
            path.unlink(missing_ok=True)
    raise SuiteError(
        f"variant {variant.name}: its database's fingerprint {found[:12]}... is not the "
        f"manifest's {variant.fingerprint[:12]}... (build the suite again)",
        path=str(suite.folder / MANIFEST),
    )


def variant_lanes(settings: ExecutorSettings) -> int:
    """How many query processes share a variant's predictions when one job scores: as
    many as the threads DuckDB gives a query on the base database (``threads``, else one
    per core), at most :data:`MAX_LANES`.  A variant's tables hold tens of rows and each
    of its processes runs DuckDB on one thread, so the suite uses the cores a base
    query does, and a query runs faster than on several threads.

    >>> variant_lanes(ExecutorSettings(threads=1)), variant_lanes(ExecutorSettings(threads=64))
    (1, 4)
    """
    return max(1, min(settings.threads or _usable_cores(), MAX_LANES))


def _usable_cores() -> int:
    """The cores this process may run on (a container's or ``taskset``'s share)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count() or 1


@dataclass
class SuiteRun:
    """How the variants are run: the executor settings and the predictions' dialect
    (as on the base database), the gold cache folder, the comparator profile and the
    parallel jobs."""

    settings: ExecutorSettings
    profile: str = "sqlgold"
    dialect: str | None = None
    cache_dir: Path | None = None
    jobs: int = 1
    #: the base database is DuckDB: a prediction's executed SQL runs on the variants as is
    run_executed: bool = False
    gold_executions: int = 0  # gold queries run on the variants (the rest were cached)


def ahead_of_turn(
    cache_dir: Path | None,
    executor: Executor,
    tasks: dict[str, dict[str, Any]],
    checks: Iterable[tuple[str, str]],
) -> GoldCache:
    """The gold cache of a variant with the results its cache folder holds for the
    golds of ``checks`` (task id, SQL) already read, none run: read while the variant
    before is judged, not at the start of this one's turn."""
    gold = GoldCache(cache_dir, executor)
    for tid, _ in checks:
        task = tasks[tid]
        gold.known(task["gold_sql"], today=task_today(task))
    return gold


def judge_with_suite(
    records: Iterable[dict[str, Any]],
    tasks: dict[str, dict[str, Any]],
    suite: Suite,
    run: SuiteRun,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Settle the suite verdict of every record whose ``suite`` is None (in place).

    Instances of one task with the same SQL (its languages, a prior's ``SELECT 0``) run
    once per variant and share the verdict."""
    pairs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    drops = dict(suite.drops)
    vocabulary_golds: dict[str, bool] = {}
    alone: set[tuple[str, str]] = set()  # run on the first variant only (see module)
    texts: dict[tuple[str, str], str] = {}  # the gold's text and the answer's
    for record in records:
        if record.get("suite") is not None:
            continue
        tid = record["task_id"]
        if tid not in vocabulary_golds:
            gold_sql = (tasks.get(tid) or {}).get("gold_sql")
            vocabulary_golds[tid] = isinstance(gold_sql, str) and reads_only_vocabulary(gold_sql)
        decided = without_variants(record, drops, suite.differ_on)
        if decided is not None:
            settle(record, decided)
            continue
        pair = (tid, record["sql"])
        pairs.setdefault(pair, []).append(record)
        if vocabulary_alone(
            record,
            run.dialect,
            run_executed=run.run_executed,
            gold_reads_vocabulary_only=vocabulary_golds[tid],
        ):
            alone.add(pair)
        answer = record.get("executed_sql") if run.run_executed else None
        texts[pair] = f"{(tasks.get(tid) or {}).get('gold_sql')}\n{answer or record['sql']}"
    checks = list(pairs)
    first_only = {i for i, pair in enumerate(checks) if pair in alone}
    executed = [pairs[p][0].get("executed_sql") if run.run_executed else None for p in checks]
    told: dict[int, tuple[str, str]] = {}
    matched: dict[int, int] = {}
    gold_failed: dict[int, list[str]] = {}
    with contextlib.ExitStack() as stack:
        if run.cache_dir is None:  # no cache: the variants' databases last this run only
            databases = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        else:
            databases = Path(run.cache_dir) / SUITE_DATABASES
        # one job: as many variants judged at once as the lanes a variant could have,
        # each by one query process (a group smaller than that shares them); jobs:
        # one variant at a time, its predictions shared among that many threads
        lanes = variant_lanes(run.settings)
        width = lanes if run.jobs == 1 else 1
        variants = list(suite.variants) if checks else []
        # an answer of the vocabulary alone is judged by the first variant and by each
        # with a vocabulary of its own (the others hold the first's)
        vocabulary_judges = {v.name for v in variants[:1]} | {
            v.name for v in variants if v.own_vocabulary
        }
        # a vocabulary variant holding the first variant's clinical rows returns there
        # what the first does for an answer that, like its gold, names none of the
        # vocabulary tables it changed: such answers the first judges for both
        twins = {
            v.name: vocabulary_changes(suite.folder, v.name)
            for v in variants[1:]
            if v.own_vocabulary and same_clinical_rows(suite.folder, v.name, variants[0].name)
        }
        for_twins = {
            name: {
                i
                for i, pair in enumerate(checks)
                if suite.judges(pair[0], variants[0].name)
                and not names_vocabulary(texts[pair], changed)
            }
            for name, changed in twins.items()
        }
        groups = [variants[k : k + width] for k in range(0, len(variants), width)]
        share = {  # the query processes each variant's predictions are shared among
            v.name: max(1, lanes // len(group)) if run.jobs == 1 else run.jobs
            for group in groups
            for v in group
        }
        golds: dict[str, GoldCache] = {}

        def open_one(variant: Variant) -> Executor:
            """The variant's executor, opened ahead of its turn, its golds' results
            read from the cache meanwhile too (in ``golds``)."""
            executor = open_variant(suite, variant, run.settings, databases, share[variant.name])
            try:
                golds[variant.name] = ahead_of_turn(run.cache_dir, executor, tasks, checks)
            except BaseException:
                executor.close()
                raise
            return executor

        def judge_on(todo: list[int], variant: Variant, executor: Executor) -> list[OnVariant]:
            gold = golds.pop(variant.name)
            try:
                return variant_pass(
                    [Check(tasks[checks[i][0]], checks[i][1], executed[i]) for i in todo],
                    executor,
                    gold,
                    run.profile,
                    run.dialect,
                    jobs=run.jobs,
                    lanes=share[variant.name],
                )
            finally:
                run.gold_executions += gold.executions

        opened = stack.enter_context(contextlib.closing(opened_in_turn(open_one, variants, width)))
        number = 0
        for group in opened:
            left = [i for i in range(len(checks)) if i not in told]
            if not any(v.name in vocabulary_judges for v in variants[number:]):
                left = [i for i in left if i not in first_only]
            if not left:
                break
            todo = [
                [
                    i
                    for i in left
                    if suite.judges(checks[i][0], v.name)
                    and (v.name in vocabulary_judges or i not in first_only)
                    and i not in for_twins.get(v.name, ())
                ]
                for v, _ in group
            ]
            with ThreadPoolExecutor(max_workers=len(group)) as pool:
                passes = list(pool.map(judge_on, todo, *zip(*group, strict=True)))
            # in the variants' order: a prediction told apart by one variant is judged
            # by no later one (what a later variant of its group found is set aside)
            for (variant, _), some, found_all in zip(group, todo, passes, strict=True):
                for i, found in zip(some, found_all, strict=True):
                    if i in told:
                        continue
                    if found.kind == "same":
                        matched[i] = matched.get(i, 0) + 1
                    elif found.kind == "gold_failed":
                        gold_failed.setdefault(i, []).append(variant.name)
                    else:
                        told[i] = (variant.name, found.reason)
                number += 1
                if progress:
                    progress(number, len(suite.variants))
    for name, judged in for_twins.items():  # judged for its twins by the first variant
        for i in judged - set(told):
            if not suite.judges(checks[i][0], name):
                continue
            if variants[0].name in gold_failed.get(i, ()):  # so it fails on the twin too
                gold_failed[i].append(name)
            else:
                matched[i] = matched.get(i, 0) + 1
    for i, pair in enumerate(checks):
        failed = gold_failed.get(i, [])
        dropped = pair[0] in drops
        if i in told:
            name, reason = told[i]
            entry = verdict(
                False,
                reason,
                told_apart_by=name,
                variants=matched.get(i, 0),
                gold_failed=failed,
                dropped=dropped,
            )
        else:
            n = matched.get(i, 0)
            reason = f"the same result as the gold on {n} of {len(suite.variants)} variant(s)"
            if i in first_only and not failed:
                judges = [v.name for v in suite.variants if v.name in vocabulary_judges]
                reason = (
                    f"the same result as the gold on {', '.join(judges)}: it and its gold "
                    "read vocabulary tables only, which the other variants hold as "
                    f"{suite.variants[0].name} does"
                )
            if dropped:
                judging = sum(suite.judges(pair[0], v.name) for v in suite.variants)
                reason = (
                    f"the suite drops this task ({drops[pair[0]]}): the same result as the "
                    f"gold on the {n} of {judging} variant(s) where the gold and the "
                    "reference answer agree"
                )
            if failed:
                reason += f" (the gold failed on {', '.join(failed)})"
            entry = verdict(True, reason, variants=n, gold_failed=failed, dropped=dropped)
        for record in pairs[pair]:
            settle(record, dict(entry, gold_failed_on=list(entry["gold_failed_on"])))


def variant_dialect(prediction_dialect: str | None, base_dialect: str) -> str | None:
    """The dialect a prediction's SQL is given to a variant (a DuckDB database) in: the
    one it was written for (``--dialect``, else the base engine's); None for DuckDB's own.

    >>> variant_dialect(None, "duckdb"), variant_dialect(None, "postgres")
    (None, 'postgres')
    """
    dialect = prediction_dialect or base_dialect
    return None if dialect == GOLD_DIALECT else dialect
