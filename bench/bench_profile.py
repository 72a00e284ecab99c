"""``--profile-dir DIR``: cProfile one warm scoring and one curation pass, as text.

Not part of any figure (cProfile slows Python code several-fold, DuckDB not at all);
it says where the time of the figures that miss their target goes.  Writes
``scoring_warm.txt`` and ``curation.txt``: the top functions by cumulative time and by
own time.
"""

from __future__ import annotations

import cProfile
import io
import pstats
from pathlib import Path

from bench_common import log
from bench_curation import _curate, sources
from bench_scoring import _score, repeated_tasks, write_workload

from curate.pipeline import curate_record, curation_context
from curate.sources.load import load_sources
from score.execution.executor import Executor
from score.inputs.task_set import load_tasks


def _write(profile: cProfile.Profile, path: Path, title: str) -> None:
    text = io.StringIO()
    text.write(f"{title}\n\n")
    stats = pstats.Stats(profile, stream=text).strip_dirs()
    stats.sort_stats("cumulative").print_stats(60)
    stats.sort_stats("tottime").print_stats(30)
    path.write_text(text.getvalue(), encoding="utf-8")
    log(f"profile: wrote {path}")


def write_profiles(
    db: Path,
    tasks_file: Path,
    n_instances: int,
    querylibrary: Path,
    own: Path,
    out: Path,
    work: Path,
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tasks = repeated_tasks(load_tasks(tasks_file), n_instances)
    folder = work / "profile"
    folder.mkdir()
    tasks_path, preds_path = write_workload(tasks, folder)
    with Executor(db) as ex:
        _score(tasks_path, preds_path, folder / "cold", folder / "cache", ex)
        prof = cProfile.Profile()
        prof.enable()
        _score(tasks_path, preds_path, folder / "warm", folder / "cache", ex)
        prof.disable()
        _write(
            prof,
            out / "scoring_warm.txt",
            f"run_scoring, warm gold cache, {n_instances} instances, with_priors=False",
        )
        found, _ = sources(querylibrary, own)
        for name, path, fmt in found:  # warm the DuckDB instance
            _curate(path, fmt, ex, folder / f"warm-{name}")
        # curate_records runs records on a thread pool even with one job, and cProfile
        # sees only its own thread: run the same per-record function on this thread
        records = [r for _, path, fmt in found for r in load_sources(path, fmt)[0]]
        prof = cProfile.Profile()
        prof.enable()
        with curation_context(ex) as ctx:
            for record in records:
                curate_record(record, ctx)
        prof.disable()
        _write(
            prof,
            out / "curation.txt",
            "curate_record (the per-record work of curate_to_files) on the records of "
            + ", ".join(str(p) for _, p, _ in found),
        )
