"""Figure 6: a scoring run where 1 in 10 predictions is a resource attack.

The workload of figure 1 (the task file repeated under new ids, every instance answered
with its reference answer in a fenced ``sql`` block), with every tenth answerable
instance's answer replaced by one of :data:`ATTACKS` in turn: queries DuckDB cannot
interrupt, memory that DuckDB's ``memory_limit`` does not track, results too large for
Arrow, runaway joins, texts too long or too deep to parse.  Limits: a 1 s timeout and a
1 GB memory limit (``score run --timeout 1 --memory-limit 1GB``).

A fresh process opens one Executor and runs :func:`score.scoring.run.run_scoring` (one job, no
priors) three times on the same gold cache: an untimed honest pass that fills the cache,
then the honest run and the hostile run, timed.  Reported: hostile wall / honest wall,
the longest time any attack instance took over the timeout (``total_s`` of its record:
everything from sending it to its query process to its outcome), the outcomes of the
attacks, and the peak RSS of the run's processes (the scoring process, the fork server
and the query processes, summed: with one job, the largest process that parsed answers
and the largest that ran their queries, which the executor keeps apart).
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from bench_common import log, median, run_child, timed
from bench_scoring import repeated_tasks, run_peaks, write_workload

from score.execution.executor import Executor, ExecutorSettings
from score.inputs.task_set import instances, load_tasks
from score.scoring.run import ScoringOptions, run_scoring

TIMEOUT_SECONDS = 1.0
MEMORY_LIMIT = "1GB"
EVERY = 10  # one answerable instance in EVERY is an attack


def _deep_subqueries(n: int) -> str:
    return "SELECT n FROM " + "(SELECT n FROM " * n + "(SELECT 1 AS n) t" + ") t" * n


#: (name, SQL): each one is bounded only by the sandbox (time limit, memory limit,
#: result-size cap, SQL size limit).
ATTACKS: list[tuple[str, str]] = [
    ("uninterruptible string function", "SELECT length(repeat('x', 200000000))"),
    ("list memory DuckDB does not track", "SELECT len(range(300000000))"),
    ("sorting a huge list", "SELECT len(list_sort(range(200000000)))"),
    ("result too large for Arrow", "SELECT repeat('x', 10000000) FROM range(300)"),
    ("runaway join", "SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b"),
    (
        "timeout while batches stream",
        "SELECT * FROM range(3000) t(n) UNION ALL "
        "SELECT count(*) FROM cdm.measurement a, cdm.measurement b",
    ),
    ("1 MB of SQL", "SELECT " + "1+" * 500_000 + "1"),
    ("5,000-branch UNION ALL (under the size limit)", " UNION ALL ".join(["SELECT 1"] * 5000)),
    ("200 nested subqueries", _deep_subqueries(200)),
    (
        "string aggregation past the memory limit",
        "SELECT length(string_agg(repeat('x', 1000), '')) FROM range(3000000)",
    ),
]


def write_hostile(tasks: list[dict[str, Any]], folder: Path) -> tuple[Path, Path, Path, dict]:
    """The honest workload, and the same with every tenth answerable instance attacking;
    returns the task file, both prediction files and attack name by instance key."""
    tasks_path, honest = write_workload(tasks, folder)
    hostile = folder / "bench_predictions_hostile.jsonl"
    attacks: dict[str, str] = {}
    answerable = 0
    with honest.open(encoding="utf-8") as src, hostile.open("w", encoding="utf-8") as out:
        for inst, line in zip(instances(tasks), src, strict=True):
            record = json.loads(line)
            if inst.task["answerable"]:
                if answerable % EVERY == EVERY - 1:
                    name, sql = ATTACKS[(answerable // EVERY) % len(ATTACKS)]
                    record["output"] = f"```sql\n{sql}\n```"
                    attacks[f"{inst.task_id}\t{inst.language}"] = name
                answerable += 1
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return tasks_path, honest, hostile, attacks


def hostile_child(db: str, tasks_path: str, honest: str, hostile: str, work: str) -> None:
    """Run in a fresh process: honest then hostile scoring; print the figures as JSON."""
    work_dir = Path(work)
    settings = ExecutorSettings(timeout_seconds=TIMEOUT_SECONDS, memory_limit=MEMORY_LIMIT)
    cache = work_dir / "cache"

    def score(preds: str, out: str):
        return run_scoring(
            tasks_path,
            preds,
            work_dir / out,
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False, jobs=1),
        )

    with Executor(db, settings=settings) as ex:
        score(honest, "warmup")  # fills the gold cache; not timed
        honest_s, _ = timed(lambda: score(honest, "honest"))
        hostile_s, _ = timed(lambda: score(hostile, "hostile"))
        peaks = run_peaks(ex)
        replaced = ex.workers_replaced
    with (work_dir / "hostile" / "results.jsonl").open(encoding="utf-8") as f:
        records = {f"{r['task_id']}\t{r['language']}": r for r in map(json.loads, f)}
    print(
        json.dumps(
            {
                **peaks,
                "honest_s": honest_s,
                "hostile_s": hostile_s,
                "workers_replaced": replaced,
                "records": {
                    k: [r["outcome"], r["timings"]["total_s"], r["reason"][:120]]
                    for k, r in records.items()
                },
            }
        )
    )


def hostile_cost(
    db: Path, tasks_file: Path, n_instances: int, runs: int, work: Path
) -> dict[str, Any]:
    """Figure 6, run ``runs`` times in fresh processes."""
    tasks = repeated_tasks(load_tasks(tasks_file), n_instances)
    folder = work / "hostile"
    folder.mkdir()
    tasks_path, honest, hostile, attacks = write_hostile(tasks, folder)
    log(
        f"hostile: {len(instances(tasks))} instances, {len(attacks)} attacks, "
        f"timeout {TIMEOUT_SECONDS:g} s, memory limit {MEMORY_LIMIT}, {runs} runs"
    )
    found: list[dict[str, Any]] = []
    for i in range(runs):
        run_work = folder / f"run-{i}"
        run_work.mkdir()
        lines, killed, err = run_child(
            [
                str(Path(__file__)),
                "hostile-child",
                str(db),
                str(tasks_path),
                str(honest),
                str(hostile),
                str(run_work),
            ],
            timeout=1800,
        )
        if killed or not lines:
            log(f"  run {i + 1}: no result ({'killed after timeout' if killed else err})")
            continue
        got = json.loads(lines[-1])
        slowest = max(got["records"][k][1] for k in attacks)
        got["max_attack_s"] = slowest
        found.append(got)
        log(
            f"  run {i + 1}: honest {got['honest_s']:.1f} s, hostile {got['hostile_s']:.1f} s "
            f"(x{got['hostile_s'] / got['honest_s']:.1f}), slowest attack {slowest:.2f} s, "
            f"peak RSS {got['peak_rss_kib'] / 1024:.0f} MiB, "
            f"{got['workers_replaced']} query processes replaced"
        )
    if not found:
        return {"instances": len(instances(tasks)), "runs": 0}
    last = found[-1]["records"]
    by_attack: dict[str, Counter] = {}
    slowest_by_attack: dict[str, float] = {}
    for key, name in attacks.items():
        by_attack.setdefault(name, Counter())[last[key][0]] += 1
        slowest_by_attack[name] = max(
            slowest_by_attack.get(name, 0.0), *(f["records"][key][1] for f in found)
        )
    return {
        "instances": len(instances(tasks)),
        "attacks": len(attacks),
        "timeout_seconds": TIMEOUT_SECONDS,
        "memory_limit": MEMORY_LIMIT,
        "runs": len(found),
        "ratio": median(f["hostile_s"] / f["honest_s"] for f in found),
        "honest_s": median(f["honest_s"] for f in found),
        "hostile_s": median(f["hostile_s"] for f in found),
        "max_attack_over_timeout": max(f["max_attack_s"] for f in found) / TIMEOUT_SECONDS,
        "peak_rss_mb": max(f["peak_rss_kib"] for f in found) / 1024,
        "parts_mb": {
            part: max(f.get(f"{part}_kib", 0) for f in found) / 1024
            for part in (
                "scoring_process",
                "fork_server",
                "query_process",
                "parse_lane",
                "query_lane",
            )
        },
        "workers_replaced": median(f["workers_replaced"] for f in found),
        "outcomes_by_attack": {k: dict(v) for k, v in by_attack.items()},
        "slowest_by_attack_s": slowest_by_attack,
        "per_run": [{k: v for k, v in f.items() if k != "records"} for f in found],
    }


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "hostile-child":
        hostile_child(*sys.argv[2:])
    else:
        sys.exit("usage: bench_hostile.py hostile-child DB TASKS HONEST HOSTILE WORK")
