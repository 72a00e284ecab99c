"""Figure 10: BIRD's VES of the reference answers against their golds, and its spread.

Every answerable task of the task file is answered with its reference answer
(``answer_sql``, the gold where a task has none; ABSTAIN where unanswerable), scored once
with ``--efficiency ves`` (10 timed runs of each query, alternating, in one query
process) per bench run, and the VES of each run kept: the figure is their median, min
and max, so the spread says how much a timing-based score moves between two scorings of
the same answers on this machine.  ``--efficiency cost`` (EXPLAIN estimates) is scored
in every run too: it must not move at all.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_common import log, median
from bench_scoring import answer_of

from score.execution.executor import Executor, ExecutorSettings
from score.inputs.task_set import instances, load_tasks
from score.scoring.run import ScoringOptions, run_scoring


def _predictions(tasks: list[dict[str, Any]], path: Path) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for inst in instances(tasks):
            sql = answer_of(inst.task)
            line = {"task_id": inst.task_id, "language": inst.language}
            line.update({"output": "ABSTAIN"} if sql is None else {"sql": sql})
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    return path


def efficiency_spread(db: Path, tasks_path: Path, runs: int, work: Path) -> dict[str, Any]:
    """VES (and VES on cost ratios) of the reference answers, once per run."""
    tasks = load_tasks(tasks_path)
    preds = _predictions(tasks, work / "reference_answers.jsonl")
    found: dict[str, list[dict[str, Any]]] = {"ves": [], "cost": []}
    with Executor(db, settings=ExecutorSettings(timeout_seconds=60)) as ex:
        for i in range(runs):
            for method in found:
                options = ScoringOptions(
                    cache_dir=work / "cache", with_priors=False, efficiency=method
                )
                out = run_scoring(tasks_path, preds, work / f"{method}{i}", ex, options)
                e = out.summary["efficiency"]
                found[method].append(e)
                log(f"efficiency run {i + 1}/{runs}: {e['label']} {e['score']:.2f}")
    ves = [e["score"] for e in found["ves"]]
    cost = [e["score"] for e in found["cost"]]
    first = found["ves"][0]
    return {
        "runs": runs,
        "timed_runs": first["runs"],
        "n": first["n"],
        "n_correct": first["n_correct"],
        "ves": ves,
        "ves_median": median(ves),
        "ves_spread": max(ves) - min(ves),
        "ratio_median": [e["ratio_median"] for e in found["ves"]],
        "failed": [e["n_failed"] for e in found["ves"]],
        "cost_ves": cost,
        "cost_ves_spread": max(cost) - min(cost),
    }
