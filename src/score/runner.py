"""One scoring run end to end: task file + predictions -> a finished run folder.

This is the I/O edge around :func:`score.scorer.score_predictions`: it hashes the
inputs, opens the gold cache, streams records into the run folder (resumable), scores
seed 004's two priors with the same code, and writes the summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from .defaults import DEFAULT_CACHE
from .errors import ScoringError
from .executor import Executor
from .gold_cache import GoldCache
from .predictions import read_predictions
from .run_dir import RunDir
from .scorer import PRIORS, ScoringContext, prior_predictions, score_predictions
from .split import split_tasks
from .stats import summarize
from .tasks import instances, load_tasks


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RunOutcome:
    summary: dict[str, Any]
    gold_executions: int  # gold queries actually run (0 when all came from the cache)
    scored: int  # instances scored by this call (fewer than all when resuming)


def tasks_sha256(path: str | Path) -> str:
    """sha256 of a task file, or of a release folder's manifest."""
    path = Path(path)
    return file_sha256(path / "manifest.json" if path.is_dir() else path)


def run_scoring(
    tasks_path: str | Path,
    predictions_path: str | Path,
    out: str | Path,
    executor: Executor,
    *,
    profile: str = "sqlgold",
    run: str | None = None,
    jobs: int = 1,
    resume: bool = False,
    cache_dir: str | Path | None = DEFAULT_CACHE,
    strict: bool = True,
    seed: int = 0,
    resamples: int = 2000,
    with_priors: bool = True,
    manifest: str | Path | None = None,
    progress: Callable[[int, int], None] | None = None,
    split: str = "all",
    test_fraction: float = 0.5,
    split_seed: int = 0,
    dialect: str | None = None,
) -> RunOutcome:
    """Score ``predictions_path`` against ``tasks_path`` into the folder ``out``.

    With ``strict`` (the default) any bad prediction line stops the run before anything
    runs; otherwise bad lines are reported in the summary's ``input_problems`` and the
    instances they would have answered are scored as missing.  ``tasks_path`` may be a
    release folder (checked against its manifest); ``manifest`` checks a JSONL task file
    against a release's manifest before anything runs.  ``split`` (``train`` or ``test``)
    scores only that side of the leakage-aware split (:func:`score.split.split_tasks`),
    the side ``sqlgold generate --split`` asked about; ``all`` scores every task.
    """
    tasks = load_tasks(tasks_path, manifest=manifest)
    chosen_split = None
    if split != "all":
        tasks = split_tasks(tasks, test_fraction=test_fraction, seed=split_seed)[split]
        if not tasks:
            raise ScoringError(
                f"the {split} side of the split holds no tasks (test fraction {test_fraction})",
                path=str(tasks_path),
            )
        chosen_split = {"side": split, "test_fraction": test_fraction, "seed": split_seed}
    predictions = read_predictions(predictions_path, tasks, run=run)
    if strict:
        predictions.raise_problems()
    settings = asdict(executor.settings)
    settings["today"] = settings["today"].isoformat() if settings["today"] else None
    meta = {
        "tasks": str(tasks_path),
        "tasks_sha256": tasks_sha256(tasks_path),
        "predictions": str(predictions_path),
        "predictions_sha256": file_sha256(predictions_path),
        **({"split": chosen_split} if chosen_split else {}),
        "run": predictions.run,
        "profile": profile,
        "database": executor.db_label,
        "engine": executor.engine,
        "prediction_dialect": dialect or executor.dialect,
        "database_schema": executor.schema,
        "database_fingerprint": executor.fingerprint,
        "settings": settings,
        "versions": {
            "sqlgold": version("sqlgold"),
            "duckdb": duckdb.__version__,
            "sqlglot": sqlglot.__version__,
        },
    }
    gold = GoldCache(cache_dir, executor)
    ctx = ScoringContext(executor, gold, profile, predictions.run, dialect)
    run_dir = RunDir(out, meta, resume=resume)
    total = len(instances(tasks))
    try:
        done = frozenset(run_dir.done)
        finished = len(done)
        for record in score_predictions(tasks, predictions.by_key, ctx, skip=done, jobs=jobs):
            run_dir.append(record)
            finished += 1
            if progress:
                progress(finished, total)
    finally:
        run_dir.close()
    records = run_dir.records()
    summary = summarize(records, seed=seed, resamples=resamples)
    summary["meta"] = {
        "profile": profile,
        "database_fingerprint": executor.fingerprint,
        "tasks": str(tasks_path),
        "tasks_sha256": meta["tasks_sha256"],
        **({"split": chosen_split} if chosen_split else {}),
    }
    summary["input_problems"] = [str(p) for p in predictions.problems]
    priors = []
    if with_priors:
        for kind, label in PRIORS.items():
            prior_ctx = ScoringContext(executor, gold, profile, label)
            prior_records = list(
                score_predictions(tasks, prior_predictions(tasks, kind), prior_ctx, jobs=jobs)
            )
            priors.append(summarize(prior_records, seed=seed, resamples=resamples, prior=True))
    run_dir.finish(summary, priors)
    return RunOutcome(summary, gold.executions, len(run_dir.done) - len(done))
