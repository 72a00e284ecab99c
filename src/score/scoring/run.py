"""One scoring run end to end: task file + predictions -> a finished run folder.

This is the I/O edge around :func:`score.scoring.pipeline.score_predictions`: it selects the split
to score, checks the run can be pinned (no ``--today`` conflicting with the day a task
was verified under), hashes the inputs, opens the gold cache, streams records into the
run folder (resumable), scores seed 004's two priors with the same code, and writes the
summary, which says which split was scored and how many tasks' gold results drifted,
and the run's review page (``report.html``, :mod:`score.pages.scoring_page`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from score.defaults import DEFAULT_CACHE
from score.errors import InputError, ScoringError
from score.execution.executor import Executor, OpeningExecutor
from score.execution.lanes import workers_for_scoring
from score.files import file_sha256, write_atomic
from score.inputs.predictions import TEXT2OMOP, read_predictions
from score.inputs.split import ScoredSplit, select_split
from score.inputs.task_manifest import set_hash
from score.inputs.task_set import TaskSet, instances, open_task_set
from score.inputs.text2omop import DIALECT as TEXT2OMOP_DIALECT
from score.inputs.validated_files import ValidatedFiles
from score.pages.document import PAGE_FILE
from score.pages.scoring_page import scoring_page
from score.scoring.efficiency import check_method, measure_efficiency
from score.scoring.gold_cache import GoldCache
from score.scoring.gold_pin import task_today, today_conflicts
from score.scoring.languages import language_summary, language_warnings, languages_scored
from score.scoring.outcomes import Outcome
from score.scoring.phases import warm_compare_phase
from score.scoring.pipeline import ScoringContext, score_predictions
from score.scoring.prior_cache import PriorCache, prior_key
from score.scoring.priors import PRIORS, prior_predictions
from score.scoring.run_folder import RunDir
from score.scoring.run_lock import check_unlocked
from score.scoring.suite_phase import (
    SuiteRun,
    judge_with_suite,
    open_suite,
    suite_meta,
    variant_dialect,
)
from score.scoring.suite_verdicts import mark_for_suite, suite_summary
from score.scoring.text2omop_summary import text2omop_summary
from score.statistics.alternative_golds import alternative_summary
from score.statistics.metrics import failure_reasons
from score.statistics.soft_f1 import soft_f1_summary
from score.statistics.summary import summarize_runs
from score.versions import installed_versions

#: What of run.json the priors' summaries depend on, besides the tasks scored: the
#: database and engine, the executor's settings and the versions of what scores them.
PRIOR_META = (
    "profile",
    "database_fingerprint",
    "engine",
    "database_schema",
    "settings",
    "versions",
)


@dataclass(frozen=True)
class RunOutcome:
    summary: dict[str, Any]
    gold_executions: int  # gold queries actually run (0 when all came from the cache)
    scored: int  # instances scored by this call (fewer than all when resuming)
    split: ScoredSplit | None = None
    warnings: tuple[str, ...] = ()  # what a person should know (the CLI prints them)

    @property
    def gold_drift(self) -> int:
        """Instances whose gold result is not the one their task was verified with."""
        return self.summary["outcomes"]["counts"].get(Outcome.GOLD_DRIFT, 0)


def check_today(tasks: list[dict[str, Any]], executor: Executor | OpeningExecutor) -> None:
    """Refuse a fixed today (``--today``) other than the day tasks were verified under."""
    today = executor.settings.today
    conflicts = today_conflicts(tasks, today)
    if conflicts:
        days = "; ".join(
            f"{day}: {len(ids)} task(s), e.g. {ids[0]}" for day, ids in sorted(conflicts.items())
        )
        raise ScoringError(
            f"--today {today} conflicts with the day tasks were verified under ({days}); "
            "leave --today out: each task runs under its own"
        )


def _warnings(task_set: TaskSet, executor: Executor, summary: dict[str, Any]) -> list[str]:
    found = []
    verified = task_set.verified_fingerprint
    if verified and verified != executor.fingerprint:
        found.append(
            f"the tasks were verified on data with fingerprint {verified}; this database's "
            f"is {executor.fingerprint}: tasks whose gold result changed are gold_drift"
        )
    counts = summary["outcomes"]["counts"]
    drifted = counts.get(Outcome.GOLD_DRIFT, 0)
    if drifted:
        found.append(
            f"{drifted} instance(s) are gold_drift (their gold result is not the one the "
            "task was verified with) and are left out of every score"
        )
    found += language_warnings(summary["languages"])
    without_task = summary["split"].get("predictions_without_task", 0)
    if without_task:
        found.append(
            f"{without_task} result line(s) answer no task of this task set (items curation "
            "dropped, or lines from another file): not scored"
        )
    missing, total = counts.get(Outcome.MISSING, 0), summary["n_instances"]
    if total and missing * 2 > total:
        found.append(
            f"{missing} of {total} instances have no prediction (missing): check the "
            "predictions' task ids, languages and run label, and the split scored"
        )
    return found


def tasks_sha256(path: str | Path) -> str:
    """sha256 of a task file, or of a release folder's manifest."""
    path = Path(path)
    return file_sha256(path / "manifest.json" if path.is_dir() else path)


@dataclass(frozen=True)
class ScoringOptions:
    """How a run is scored, apart from what is scored and where it goes.

    ``profile`` is the comparator; ``run`` picks one run label from a predictions file
    that holds several; ``jobs`` instances are scored at once; ``resume`` continues a
    folder; ``cache_dir`` holds gold results and the task-file memo (None: no cache);
    ``strict`` stops at a bad prediction line; ``seed`` and ``resamples`` drive the
    bootstrap; ``with_priors`` also scores seed 004's priors; ``manifest`` checks a task
    file against a release; ``split``, ``test_fraction`` and ``split_seed`` choose the
    tasks scored (``split`` None: ``all`` for a TEXT-TO-OMOP result file, whose tasks are
    all its test set, else ``test``); ``dialect`` is the predictions' SQL dialect when
    not the engine's (default ``postgres`` for a TEXT-TO-OMOP result file);
    ``efficiency`` (``ves``, ``rves`` or ``cost``) also measures the right answers'
    efficiency, ``efficiency_runs`` times each (default: the measure's own);
    ``languages`` scores only the instances in those question languages (None: all);
    ``suite`` is a test suite's folder: an instance is then correct only if it also
    matches on every variant (:mod:`score.scoring.suite_phase`).
    """

    profile: str = "sqlgold"
    run: str | None = None
    jobs: int = 1
    resume: bool = False
    cache_dir: str | Path | None = DEFAULT_CACHE
    strict: bool = True
    seed: int = 0
    resamples: int = 2000
    with_priors: bool = True
    manifest: str | Path | None = None
    split: str | None = "all"
    test_fraction: float | None = None
    split_seed: int | None = None
    dialect: str | None = None
    languages: tuple[str, ...] | None = None
    efficiency: str | None = None
    efficiency_runs: int | None = None
    suite: str | Path | None = None


def run_scoring(
    tasks_path: str | Path,
    predictions_path: str | Path,
    out: str | Path,
    executor: Executor | OpeningExecutor,
    options: ScoringOptions = ScoringOptions(),
    *,
    progress: Callable[[int, int], None] | None = None,
    measuring: Callable[[int, int], None] | None = None,
    judging: Callable[[int, int], None] | None = None,
) -> RunOutcome:
    """Score ``predictions_path`` against ``tasks_path`` into the folder ``out``.

    With ``options.strict`` (the default) any bad prediction line stops the run before
    anything runs; otherwise bad lines are reported in the summary's ``input_problems`` and the
    instances they would have answered are scored as missing.  ``tasks_path`` may be a
    release folder (checked against its manifest); ``manifest`` checks a JSONL task file
    against a release's manifest before anything runs.  ``split`` scores the ``test``
    or ``train`` side of the leakage-aware split, or ``all`` tasks
    (:func:`score.inputs.split.select_split`); predictions for tasks outside it are not scored.
    ``measuring`` reports the efficiency measurement's progress, ``judging`` the suite's
    (variants done, of all).  ``executor`` may still be opening
    (:class:`~score.execution.executor.OpeningExecutor`): the inputs are read meanwhile.
    """
    check_unlocked(out)  # a run still writing ``out``: said before any work
    cache_dir = options.cache_dir
    memo = ValidatedFiles()  # the user cache's memo, whatever the gold cache
    task_set = open_task_set(tasks_path, manifest=options.manifest, validated=memo)
    predictions = read_predictions(predictions_path, task_set.tasks, run=options.run)
    result_file = predictions.format == TEXT2OMOP
    scored = select_split(
        task_set.tasks,
        task_set.splits,
        options.split or ("all" if result_file else "test"),
        test_fraction=options.test_fraction,
        seed=options.split_seed,
    )
    tasks = scored.tasks
    check_today(tasks, executor)
    languages = languages_scored(tasks, options.languages)
    dialect = options.dialect or (TEXT2OMOP_DIALECT if result_file else None)
    if not predictions.by_key and not predictions.problems:
        raise InputError(
            "the file holds no predictions"
            + (f" with run label {options.run!r}" if options.run is not None else ""),
            stage="predictions",
            path=str(predictions_path),
        )
    if options.strict:
        predictions.raise_problems()
    outside = [k for k in predictions.by_key if k[0] not in scored.ids]
    other_languages = [k for k in predictions.by_key if k[1] not in languages]
    for key in {*outside, *other_languages}:
        del predictions.by_key[key]
    if isinstance(executor, OpeningExecutor):
        warm_compare_phase(options.profile)  # while the query processes open
        executor = executor.result()
    runs = None
    if options.efficiency is not None:
        runs = check_method(options.efficiency, options.efficiency_runs, executor.engine)
    executor.start_ahead(workers_for_scoring(options.jobs))
    suite = None
    if options.suite is not None:
        suite = open_suite(options.suite, task_set.tasks, executor, predictions)
    settings = asdict(executor.settings)
    settings["today"] = settings["today"].isoformat() if settings["today"] else None
    meta = {
        "tasks": str(tasks_path),
        "tasks_sha256": tasks_sha256(tasks_path),
        "task_set_sha256": task_set.set_hash(),
        "predictions": str(predictions_path),
        "predictions_sha256": file_sha256(predictions_path),
        "run": predictions.run,
        "split": scored.to_dict(),
        "profile": options.profile,
        "database": executor.db_label,
        "engine": executor.engine,
        "prediction_dialect": dialect or executor.dialect,
        "database_schema": executor.schema,
        "database_fingerprint": executor.fingerprint,
        "database_fingerprint_check": executor.fingerprint_check.describe(),
        "session": executor.session_settings,
        **({"languages": list(languages)} if options.languages is not None else {}),
        **({"suite": suite_meta(suite)} if suite is not None else {}),
        "settings": settings,
        "versions": installed_versions(),
    }
    gold = GoldCache(cache_dir, executor)
    ctx = ScoringContext(executor, gold, options.profile, predictions.run, dialect=dialect)
    run_dir = RunDir(out, meta, resume=options.resume)
    answered = {task_id for task_id, _ in predictions.by_key}
    gold.run_ahead(  # the golds answered, in the order the comparisons ask for them
        [
            (t["gold_sql"], task_today(t))
            for t in tasks
            if t["answerable"] and t["gold_sql"] and t["id"] in answered
        ]
    )
    try:
        total = len(instances(tasks, languages))
        try:
            done = frozenset(run_dir.done)
            finished = len(done)
            scoring = score_predictions(
                tasks, predictions.by_key, ctx, skip=done, jobs=options.jobs, languages=languages
            )
            for result in scoring:
                record = result.to_record()
                run_dir.append(mark_for_suite(record) if suite is not None else record)
                finished += 1
                if progress:
                    progress(finished, total)
        finally:
            run_dir.close()
        by_id = {t["id"]: t for t in tasks}
        priors_cache = PriorCache(cache_dir)
        priors_key = prior_key(
            {
                "tasks": task_set.set_hash()
                if len(tasks) == len(task_set.tasks)
                else set_hash(tasks),
                "order": [t["id"] for t in tasks],
                "languages": list(languages),
                **{k: meta[k] for k in PRIOR_META},
                "suite": None if suite is None else meta["suite"]["manifest_sha256"],
                "seed": options.seed,
                "resamples": options.resamples,
            }
        )
        priors = priors_cache.get(priors_key) if options.with_priors else []
        prior_records: dict[str, list[dict[str, Any]]] = {}
        if priors is None:
            for kind, label in PRIORS.items():
                # a prior runs no gold: each task's pinned result stands for it
                prior_ctx = ScoringContext(
                    executor,
                    gold,
                    options.profile,
                    label,
                    gold_from_pin=True,
                    shared_runs={},
                    decided_texts={},
                )
                prior_records[kind] = [
                    mark_for_suite(r.to_record()) if suite is not None else r.to_record()
                    for r in score_predictions(
                        tasks,
                        prior_predictions(tasks, kind),
                        prior_ctx,
                        jobs=options.jobs,
                        languages=languages,
                    )
                ]
        judge = None
        if suite is not None:  # the run's and the priors' instances, in one pass
            judge = SuiteRun(
                executor.settings,
                options.profile,
                variant_dialect(dialect, executor.dialect),
                None if cache_dir is None else Path(cache_dir),
                options.jobs,
                run_executed=executor.dialect == "duckdb",
            )
            judged = run_dir.records() + [r for rs in prior_records.values() for r in rs]
            judge_with_suite(judged, by_id, suite, judge, progress=judging)
        records = run_dir.records()
        # the priors' summaries (when not cached) with the run's: the same questions, so
        # one set of bootstrap draws per group serves the three
        fresh = list(prior_records.values())  # none when the priors' summaries were cached
        summary, *fresh_summaries = summarize_runs(
            [records, *fresh],
            seed=options.seed,
            resamples=options.resamples,
            priors=[False] + [True] * len(fresh),
        )
        if priors is None:
            priors = fresh_summaries
            priors_cache.put(priors_key, priors)
        summary["meta"] = {
            "profile": options.profile,
            "database_fingerprint": executor.fingerprint,
            "verified_fingerprint": task_set.verified_fingerprint,
            "tasks": str(tasks_path),
            "tasks_sha256": meta["tasks_sha256"],
            "task_set_sha256": meta["task_set_sha256"],
            "engine": executor.engine,
            "session": executor.session_settings,
        }
        summary["split"] = {**scored.to_dict(), "predictions_outside": len(outside)}
        summary["languages"] = {
            **language_summary(tasks, languages, options.languages is not None, predictions.by_key),
            "predictions_outside": len(other_languages),
        }
        if result_file:
            summary["split"]["predictions_without_task"] = predictions.without_task
        transpiled = sum(1 for r in records if r.get("transpiled_from"))
        if transpiled:
            summary["predictions_transpiled"] = {
                "from": dialect,
                "to": executor.dialect,
                "instances": transpiled,
            }
        summary["failure_reasons"] = failure_reasons(records)
        summary["input_problems"] = [str(p) for p in predictions.problems]
        if suite is not None:
            summary["suite"] = {**suite_meta(suite), **suite_summary(records)}
        if options.profile == "bird":
            summary["soft_f1"] = soft_f1_summary(records)
        matched = alternative_summary(records)
        if matched is not None:
            summary["alternative_golds"] = matched
        if options.profile == "text2omop":
            summary["text2omop"] = text2omop_summary(records, by_id, gold, ctx.pins)
        if options.efficiency is not None and runs is not None:
            # writes each right answer's measurement into its record (the run folder's own
            # dicts: results.jsonl carries them when the folder is finished)
            summary["efficiency"] = measure_efficiency(
                records,
                by_id,
                executor,
                options.efficiency,
                runs,
                dialect=dialect,
                progress=measuring,
            )
        warnings = _warnings(task_set, executor, summary)
        summary["warnings"] = warnings
        run_dir.finish(summary, priors)
        page = {"meta": run_dir.meta, "summary": summary, "records": run_dir.records()}
        write_atomic(run_dir.path / PAGE_FILE, scoring_page(page, by_id))
        executions = gold.executions + (judge.gold_executions if judge is not None else 0)
        return RunOutcome(
            summary, executions, len(run_dir.done) - len(done), scored, tuple(warnings)
        )
    finally:
        gold.close()
        run_dir.release()  # also when the run fails or is stopped: the folder is free
