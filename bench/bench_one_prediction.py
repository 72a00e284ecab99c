"""Figure 12: scoring one prediction, against running that prediction and its gold.

A user checks one answer: a predictions file answering one instance of the project's
task set, scored with the gold cache off (``score run TASKS one.jsonl --no-cache
--split all``).  Only that instance's gold may run (``gold_executions`` must be 1: a
task no prediction answers runs no gold, and the priors compare with the pinned
results), so what is left is sqlgold's own fixed cost: reading and checking the task
set, the other instances' ``missing``, the two priors (every instance's ABSTAIN and
``SELECT 0``, through the same pipeline), three bootstrapped summaries and the run
folder with its review page.  The same scoring with the cache folder an earlier
scoring of it filled (``score run``'s default, as a user checking answers one after
another has it) is timed too: the gold's result and the priors' summaries then come
from there (:mod:`score.scoring.prior_cache`), so only the prediction runs.

What is timed: :func:`score.scoring.run.run_scoring` on an
:class:`~score.execution.executor.Executor` opened beforehand (the open, a process start
and the database's, is :mod:`bench_startup`'s), with the priors (as ``score run``) and
without; the direct time is the prediction's query and its gold's run by the engine's
plain client (:class:`bench_common.RawDuckDB`; psycopg on PostgreSQL), each warmed up once.
The ratio is the scoring's median over the direct time's median.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import RawDuckDB, log, median

from score.execution.executor import Executor
from score.inputs.task_set import load_tasks
from score.scoring.run import ScoringOptions, run_scoring


def first_answerable(tasks_file: Path) -> dict[str, Any]:
    return next(t for t in load_tasks(tasks_file) if t["answerable"] and t.get("answer_sql"))


def one_prediction(
    ex: Executor,
    tasks_file: Path,
    work: Path,
    runs: int,
    direct: Callable[[list[str]], float],
    *,
    prediction: str | None = None,
    gold: str | None = None,
) -> dict[str, Any]:
    """Time scoring one prediction (the first answerable task's reference answer, or
    ``prediction``) against ``direct`` running it and its gold (``gold``: the task's,
    as the engine runs it)."""
    task = first_answerable(tasks_file)
    sql = prediction or task["answer_sql"]
    preds = work / "one.jsonl"
    line = {"task_id": task["id"], "language": "en", "output": f"```sql\n{sql}\n```"}
    preds.write_text(json.dumps(line) + "\n", encoding="utf-8")
    queries = [sql, gold or task["gold_sql"]]
    direct(queries)  # warm-up: neither side pays for reading the data from disk

    cache = work / "cache"

    def scoring(priors: bool, i: int, cached: bool = False) -> tuple[float, Any]:
        start = time.perf_counter()
        out = run_scoring(
            tasks_file,
            preds,
            work / f"run-{priors}-{cached}-{i}",
            ex,
            ScoringOptions(cache_dir=cache if cached else None, split="all", with_priors=priors),
        )
        return time.perf_counter() - start, out

    scoring(True, -1)  # warm-up
    scoring(True, -1, cached=True)  # fills the cache: the gold's result and the priors
    rows = []
    for i in range(runs):
        d0 = direct(queries)
        with_priors, out = scoring(True, i)
        without_priors, _ = scoring(False, i)
        cached, cached_out = scoring(True, i, cached=True)
        d1 = direct(queries)
        rows.append(
            {
                "direct_s": (d0 + d1) / 2,
                "scoring_s": with_priors,
                "scoring_without_priors_s": without_priors,
                "scoring_cached_s": cached,
                "gold_executions_cached": cached_out.gold_executions,
                "gold_executions": out.gold_executions,
                "instances": out.summary["n_instances"],
                "correct": out.summary["outcomes"]["counts"].get("correct", 0),
            }
        )
    found = {k: median(r[k] for r in rows) for k in rows[0]}
    found["ratio"] = found["scoring_s"] / found["direct_s"]
    found["ratio_without_priors"] = found["scoring_without_priors_s"] / found["direct_s"]
    found["ratio_cached"] = found["scoring_cached_s"] / found["direct_s"]
    found["task"] = task["id"]
    found["runs"] = rows
    log(
        f"one prediction: scoring {found['scoring_s']:.2f} s (without priors "
        f"{found['scoring_without_priors_s']:.2f} s, with the cache of an earlier scoring "
        f"{found['scoring_cached_s']:.2f} s), direct {found['direct_s'] * 1000:.1f} ms, "
        f"{found['gold_executions']:g} gold run"
    )
    return found


def whole_process(
    db: Path,
    tasks_file: Path,
    preds: Path,
    runs: int,
    work: Path,
    *,
    profile: str = "sqlgold",
) -> dict[str, Any]:
    """Wall time of a whole ``sqlgold score run`` of one prediction, as a user types it
    (``--split all``, the default gold cache): a process of its own each time, its start,
    imports, query processes and exit included, with a user cache folder of its own
    (``XDG_CACHE_HOME``) that one untimed run filled first, as the curation of the task
    file or an earlier scoring fills a user's (the gold's result, the priors' summaries,
    the memo of validated task files).  The median of ``runs`` runs."""
    import os
    import subprocess
    import sys

    sqlgold = str(Path(sys.executable).parent / "sqlgold")
    env = {**os.environ, "XDG_CACHE_HOME": str(work / "user-cache")}
    times = []
    for i in range(runs + 1):
        out = work / f"whole-{profile}-{i}"
        cmd = [sqlgold, "score", "run", str(tasks_file), str(preds), "--out", str(out)]
        cmd += ["--db", str(db), "--split", "all", "--profile", profile, "-q"]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, cwd=work, stdout=subprocess.DEVNULL)
        if i:  # the first fills the cache folder
            times.append(time.perf_counter() - start)
    return {"seconds": median(times), "runs": times, "tasks": len(load_tasks(tasks_file))}


def whole_process_figures(db: Path, tasks_file: Path, runs: int, work: Path) -> dict[str, Any]:
    """Figure 12's whole-process rows: one prediction of the project's task set, and one
    line of a TEXT-TO-OMOP result file against its test file curated here (skipped when
    ``../shared`` is not there), with ``--profile text2omop``."""
    from bench_suite import TEXT2OMOP, text2omop_tasks

    task = first_answerable(tasks_file)
    preds = work / "one_process.jsonl"
    line = {"task_id": task["id"], "language": "en", "output": f"```sql\n{task['answer_sql']}\n```"}
    preds.write_text(json.dumps(line) + "\n", encoding="utf-8")
    found: dict[str, Any] = {"shipped": whole_process(db, tasks_file, preds, runs, work)}
    results = TEXT2OMOP.parent / "results" / "results_lora_checkpoint-312.jsonl"
    if TEXT2OMOP.is_file() and results.is_file():
        curated = work / "text2omop"
        curated.mkdir()
        text2omop_tasks(db, curated)  # the whole file, curated as bench_suite does
        one = work / "one_result_line.jsonl"
        one.write_text(results.read_text(encoding="utf-8").splitlines()[0] + "\n")
        found["text2omop"] = whole_process(
            db, curated / "text2omop_tasks.jsonl", one, runs, work, profile="text2omop"
        )
    log(
        "one prediction, whole process: "
        + ", ".join(f"{k} {v['seconds']:.2f} s ({v['tasks']} tasks)" for k, v in found.items())
    )
    return found


def duckdb_one_prediction(db: Path, tasks_file: Path, runs: int, work: Path) -> dict[str, Any]:
    raw = RawDuckDB(db)
    with Executor(db) as ex:
        return one_prediction(ex, tasks_file, work, runs, lambda sqls: raw.run_all(sqls))


if __name__ == "__main__":  # a quick look: python bench/bench_one_prediction.py
    import tempfile

    from bench_common import embedded_db
    from bench_scoring import default_tasks

    with tempfile.TemporaryDirectory() as tmp:
        db = embedded_db()
        print(json.dumps(duckdb_one_prediction(db, default_tasks(), 3, Path(tmp)), indent=1))
