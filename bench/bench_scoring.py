"""Figures 1 and 5: scoring overhead against raw DuckDB, gold-cache reuse, peak memory.

The workload: the project's task file repeated under new ids (``omop-001/r3``; the task
schema allows no ``~`` in ids) until it holds at least N instances, every instance
answered with its task's reference answer (``answer_sql``, the gold where a task has
none) as a model would, in a fenced ``sql`` block, and ABSTAIN for unanswerable tasks.
So every answerable instance runs one predicted query and comes out ``correct``.  Each
predicted text starts with a comment naming its instance (``-- omop-001/r3 ko``), so no
two instances send the same text, as with a real model's outputs: sqlgold caches the
guard's verdict and the logical form by SQL text, and identical copies would hit those
caches where a real run would not.  The comment also names the scoring (each timed
scoring has its own predictions file), so no scoring finds its texts in a cache that an
earlier scoring in the same process filled.  The identical-text variant is measured too.

What is timed is :func:`score.scoring.run.run_scoring` end to end with ``with_priors=False``
and ``jobs=1`` (read the files, score every instance, stream results.jsonl, summarise,
write the run folder), on an :class:`~score.execution.executor.Executor` opened beforehand.  The
raw time is the same SQL run by plain DuckDB (:class:`bench_common.RawDuckDB`): each
instance's predicted query once (copies of a task are separate instances and the
scorer runs each, so the raw time runs each too), plus, for the cold cache, each
distinct gold query once.  Both sides are warmed up by one untimed pass first, so
neither pays for reading the file from disk.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench_common import ROOT, RawDuckDB, clocked, log, median, run_child, timed

from score.execution.executor import Executor
from score.scoring.run import ScoringOptions, run_scoring

try:
    from score.execution.processes.sandbox import fork_server_rss_kib
except ImportError:  # code from before query processes: no fork server

    def fork_server_rss_kib() -> int:
        return 0


from score.inputs.task_file import task_file_text
from score.inputs.task_set import Instance, instances, load_tasks


def repeated_tasks(tasks: list[dict[str, Any]], min_instances: int) -> list[dict[str, Any]]:
    """The tasks repeated under new ids (copy r0, r1, ...) until there are enough instances;
    the last copy is cut short so the count is just over ``min_instances``."""
    out: list[dict[str, Any]] = []
    count = 0
    copy = 0
    while count < min_instances:
        for task in tasks:
            if count >= min_instances:
                break
            out.append({**task, "id": f"{task['id']}/r{copy}"})
            count += len(task["questions"])
        copy += 1
    return out


def answer_of(task: dict[str, Any]) -> str | None:
    """The SQL a perfect model would give, or None for ABSTAIN."""
    if not task["answerable"]:
        return None
    return task.get("answer_sql") or task["gold_sql"]


def instance_sql(inst: Instance, unique: bool, tag: str = "") -> str | None:
    """The predicted SQL of one instance; with ``unique``, a first-line comment naming
    the instance (and ``tag``) makes every text distinct, as real model outputs are, so
    caches keyed by SQL text (the guard's verdict, the logical form) get no hits a real
    run would not get.  DuckDB ignores the comment."""
    sql = answer_of(inst.task)
    if sql is None:
        return sql
    if not unique:  # the same text for every copy of a task (one per tag)
        return f"-- {tag}\n{sql}" if tag else sql
    return f"-- {tag}{inst.task_id} {inst.language}\n{sql}"


def write_workload(
    tasks: list[dict[str, Any]], folder: Path, *, unique: bool = True, tag: str = ""
) -> tuple[Path, Path]:
    """Write the task file and the predictions file of ``tasks``; ``tag`` goes into every
    text's comment (one tag per scoring, so no scoring finds its texts in a cache an
    earlier scoring in the same process filled)."""
    tasks_path = folder / "bench_tasks.jsonl"
    preds_path = folder / f"bench_predictions{'' if unique else '_identical'}{tag}.jsonl"
    tasks_path.write_text(task_file_text(tasks), encoding="utf-8")
    with preds_path.open("w", encoding="utf-8") as f:
        for inst in instances(tasks):
            sql = instance_sql(inst, unique, tag)
            output = "ABSTAIN" if sql is None else f"```sql\n{sql}\n```"
            line = {"task_id": inst.task_id, "language": inst.language, "output": output}
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return tasks_path, preds_path


def predicted_sqls(tasks: list[dict[str, Any]]) -> list[str]:
    """The query each instance runs, in scoring order (one per answerable instance)."""
    return [s for inst in instances(tasks) if (s := instance_sql(inst, True)) is not None]


def gold_sqls(tasks: list[dict[str, Any]]) -> list[str]:
    """Each distinct gold query once (the gold cache keys results by the SQL's hash)."""
    return sorted({t["gold_sql"] for t in tasks if t["answerable"] and t["gold_sql"]})


def _record_sums(run_dir: Path) -> dict[str, float]:
    sums = Counter()
    with (run_dir / "results.jsonl").open(encoding="utf-8") as f:
        for line in f:
            timings = json.loads(line)["timings"]
            for key in ("total_s", "execute_s", "compare_s"):
                sums[key] += timings.get(key, 0.0)
    return dict(sums)


def _score(tasks_path: Path, preds_path: Path, out: Path, cache: Path, ex: Executor):
    return run_scoring(
        tasks_path, preds_path, out, ex, ScoringOptions(cache_dir=cache, with_priors=False, jobs=1)
    )


def scoring_overhead(
    db: Path, tasks_file: Path, n_instances: int, runs: int, work: Path
) -> dict[str, Any]:
    """Figure 1: scoring wall time over raw DuckDB time, warm and cold gold cache."""
    tasks = repeated_tasks(load_tasks(tasks_file), n_instances)
    n = len(instances(tasks))
    tasks_path, preds_path = write_workload(tasks, work, tag="warm-up ")
    preds, golds = predicted_sqls(tasks), gold_sqls(tasks)
    log(
        f"scoring: {len(tasks)} tasks, {n} instances, {len(preds)} predicted queries, "
        f"{len(golds)} distinct gold queries, {runs} runs"
    )
    raw = RawDuckDB(db)
    per_run: list[dict[str, Any]] = []
    with Executor(db) as ex:
        # warm-up: both DuckDB instances read the file once before anything is timed
        raw.run_all(preds + golds)
        _score(tasks_path, preds_path, work / "warmup", work / "cache-warmup", ex)

        def score(preds_file: Path, out: str, cache: Path):
            return clocked(
                lambda: _score(tasks_path, preds_file, work / out, cache, ex),
                getattr(ex, "worker_cpu_seconds", None),
            )

        for i in range(runs):
            # each scoring sits between two raw passes and is divided by their mean, so
            # a burst of load from elsewhere shows on both sides of the ratio
            gold_w, gold_c, _ = raw.clocked(golds)
            r0 = raw.clocked(preds)
            cache = work / f"cache-{i}"  # empty: a cold gold cache
            cold_w, cold_c, cold = score(
                write_workload(tasks, work, tag=f"c{i} ")[1], f"cold-{i}", cache
            )
            r1 = raw.clocked(preds)
            # a second scoring of the same task set, with the cache the first one filled
            warm_w, warm_c, warm = score(
                write_workload(tasks, work, tag=f"w{i} ")[1], f"warm-{i}", cache
            )
            r2 = raw.clocked(preds)
            # the same answers with identical texts across copies (SQL-text caches hit)
            identical = write_workload(tasks, work, unique=False, tag=f"i{i}")[1]
            same_w, same_c, _ = score(identical, f"same-{i}", cache)
            r3 = raw.clocked(preds)

            def mean(a, b, k):
                return (a[k] + b[k]) / 2

            sums = _record_sums(work / f"warm-{i}")
            outcomes = Counter(
                json.loads(line)["outcome"]
                for line in (work / f"warm-{i}" / "results.jsonl").open(encoding="utf-8")
            )
            raw_pred = median([r0[0], r1[0], r2[0], r3[0]])
            row = {
                "raw_predicted_s": raw_pred,
                "raw_predicted_passes_s": [r0[0], r1[0], r2[0], r3[0]],
                "raw_gold_s": gold_w,
                "cold_s": cold_w,
                "warm_s": warm_w,
                "identical_texts_s": same_w,
                "ratio_warm": warm_w / mean(r1, r2, 0),
                "ratio_cold": cold_w / (mean(r0, r1, 0) + gold_w),
                "ratio_warm_identical_texts": same_w / mean(r2, r3, 0),
                "cpu_ratio_warm": warm_c / mean(r1, r2, 1),
                "cpu_ratio_cold": cold_c / (mean(r0, r1, 1) + gold_c),
                "gold_executions_first_run": cold.gold_executions,
                "gold_executions_second_run": warm.gold_executions,
                "warm_breakdown_s": {
                    "executor_run": sums.get("execute_s", 0.0),
                    "compare": sums.get("compare_s", 0.0),
                    "rest_of_instance": sums.get("total_s", 0.0)
                    - sums.get("execute_s", 0.0)
                    - sums.get("compare_s", 0.0),
                    "outside_instances": warm_w - sums.get("total_s", 0.0),
                },
                "outcomes": dict(outcomes),
            }
            per_run.append(row)
            log(
                f"  run {i + 1}: raw {r0[0]:.2f}/{r1[0]:.2f}/{r2[0]:.2f}/{r3[0]:.2f} s "
                f"(+ golds {gold_w:.2f} s), cold {cold_w:.2f} s, warm {warm_w:.2f} s, "
                f"identical texts {same_w:.2f} s -> warm x{row['ratio_warm']:.2f} "
                f"(CPU x{row['cpu_ratio_warm']:.2f}), cold x{row['ratio_cold']:.2f}; "
                f"gold executions {cold.gold_executions} then {warm.gold_executions}"
            )
    raw.close()
    breakdown = {
        k: median(r["warm_breakdown_s"][k] for r in per_run) for k in per_run[0]["warm_breakdown_s"]
    }
    return {
        "instances": n,
        "tasks": len(tasks),
        "predicted_queries": len(preds),
        "distinct_gold_queries": len(golds),
        "runs": runs,
        "ratio_warm": median(r["ratio_warm"] for r in per_run),
        "ratio_cold": median(r["ratio_cold"] for r in per_run),
        "ratio_warm_identical_texts": median(r["ratio_warm_identical_texts"] for r in per_run),
        "cpu_ratio_warm": median(r["cpu_ratio_warm"] for r in per_run),
        "cpu_ratio_cold": median(r["cpu_ratio_cold"] for r in per_run),
        "raw_predicted_s": median(r["raw_predicted_s"] for r in per_run),
        "raw_gold_s": median(r["raw_gold_s"] for r in per_run),
        "warm_s": median(r["warm_s"] for r in per_run),
        "cold_s": median(r["cold_s"] for r in per_run),
        "gold_executions_first_run": max(r["gold_executions_first_run"] for r in per_run),
        "gold_executions_second_run": max(r["gold_executions_second_run"] for r in per_run),
        "warm_breakdown_s": breakdown,
        "outcomes": per_run[-1]["outcomes"],
        "per_run": per_run,
    }


# -- figure 5: peak memory in a fresh process -----------------------------------------


def _vm(field: str) -> int:
    """A /proc/self/status field in KiB (VmHWM: the peak resident set size)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def run_peaks(ex: Executor) -> dict[str, int]:
    """Peak RSS in KiB of the processes of a scoring run: this one, the fork server its
    query processes come from, and the query processes; ``peak_rss_kib`` is their sum, a
    bound on the run's peak.  The query processes count as the executor bounds them
    (:meth:`~score.execution.processes.sandbox.WorkerPool.peak_rss_by_lane`): per lane,
    the largest peaks of as many as were busy at once (with one job, one process that
    parses answers and one that runs their queries), plus what its idle ones (a spare, a
    replacement started ahead) may have held at once."""
    lanes: dict[str, int] = {}
    if hasattr(ex, "workers_peak_rss_by_lane"):
        lanes = ex.workers_peak_rss_by_lane()
        worker = sum(lanes.values())
    elif hasattr(ex, "peak_worker_rss_kib"):  # older commits: one process at a time
        worker = ex.peak_worker_rss_kib()
    else:
        worker = 0
    parent, server = _vm("VmHWM"), fork_server_rss_kib()
    return {
        "peak_rss_kib": parent + server + worker,
        "scoring_process_kib": parent,
        "fork_server_kib": server,
        "query_process_kib": worker,
        **{f"{name}_lane_kib": kib for name, kib in lanes.items()},
    }


def memory_child(db: str, tasks_path: str, preds_path: str, work: str) -> None:
    """Run in a fresh process: score the workload and print the peak RSS as JSON."""
    work_dir = Path(work)
    with Executor(db) as ex:
        ex.fingerprint  # noqa: B018 - opened and ready, as the CLI is before scoring
        before = run_peaks(ex)["peak_rss_kib"]
        seconds, outcome = timed(
            lambda: run_scoring(
                tasks_path,
                preds_path,
                work_dir / "run",
                ex,
                ScoringOptions(cache_dir=work_dir / "cache", with_priors=False, jobs=1),
            )
        )
        peaks = run_peaks(ex)
    print(
        json.dumps(
            {
                **peaks,
                "peak_rss_kib_before_scoring": before,
                "seconds": seconds,
                "scored": outcome.scored,
                "ex": outcome.summary.get("ex"),
            }
        )
    )


def peak_memory(
    db: Path, tasks_file: Path, n_instances: int, runs: int, work: Path, timeout: float
) -> dict[str, Any]:
    """Figure 5: peak RSS of scoring ``n_instances`` in a fresh subprocess, per run."""
    tasks = repeated_tasks(load_tasks(tasks_file), n_instances)
    folder = work / "memory"
    folder.mkdir()
    tasks_path, preds_path = write_workload(tasks, folder)
    n = len(instances(tasks))
    log(f"memory: scoring {n} instances in a fresh process, {runs} runs")
    found: list[dict[str, Any]] = []
    for i in range(runs):
        run_work = folder / f"run-{i}"
        run_work.mkdir()
        lines, killed, err = run_child(
            [
                str(Path(__file__)),
                "memory-child",
                str(db),
                str(tasks_path),
                str(preds_path),
                str(run_work),
            ],
            timeout=timeout,
        )
        if killed or not lines:
            log(f"  run {i + 1}: no result ({'killed after timeout' if killed else err})")
            continue
        got = json.loads(lines[-1])
        found.append(got)
        log(
            f"  run {i + 1}: peak RSS {got['peak_rss_kib'] / 1024:.0f} MiB "
            f"({got['peak_rss_kib_before_scoring'] / 1024:.0f} MiB before scoring), "
            f"{got['seconds']:.1f} s"
        )
    if not found:
        return {"instances": n, "runs": 0, "peak_rss_mb": None}
    return {
        "instances": n,
        "runs": len(found),
        "peak_rss_mb": median(f["peak_rss_kib"] for f in found) / 1024,
        "rss_before_scoring_mb": median(f["peak_rss_kib_before_scoring"] for f in found) / 1024,
        "parts_mb": {
            part: median(f.get(f"{part}_kib", 0) for f in found) / 1024
            for part in (
                "scoring_process",
                "fork_server",
                "query_process",
                "parse_lane",
                "query_lane",
            )
        },
        "seconds": median(f["seconds"] for f in found),
        "per_run": found,
    }


def default_tasks() -> Path:
    return ROOT / "data" / "benchmark" / "omop_tasks.jsonl"


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "memory-child":
        memory_child(*sys.argv[2:])
    else:
        sys.exit("usage: bench_scoring.py memory-child DB TASKS PREDICTIONS WORK")
