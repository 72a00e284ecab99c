"""How far a suite's variants can reach golds the base database cannot answer (issue 56).

    .venv/bin/python bench/bench_suite_reach.py TASKS [--candidates 12] [--db CDM.duckdb]

For every distinct gold of TASKS (a task file) that returns no row on the base database,
up to ``--candidates`` candidate variants are made aimed at it, as ``suite build`` makes
them (:func:`score.suite.variant_data.variant_rows` with its focus, seeded ``0:<n>``, a
third of them exact), and loaded in the build's trial database; a gold *reached* returns
rows on one of them.  This is the ceiling of the build's reach: the build keeps a
candidate only where it also tells a near miss apart, and spreads ``--max-candidates``
over every gold.  Prints how many are reached and writes the golds not reached, with
their SQL, as JSON to ``--out`` (default: nothing written).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from score.cdm.embedded import ensure_embedded  # noqa: E402
from score.execution.executor import Executor, PreparedQuery  # noqa: E402
from score.execution.result import QueryResult  # noqa: E402
from score.execution.settings import ExecutorSettings  # noqa: E402
from score.inputs.task_set import load_tasks  # noqa: E402
from score.suite.base_data import read_base  # noqa: E402
from score.suite.palette import EXACT  # noqa: E402
from score.suite.query_runs import prepare_many, today_of  # noqa: E402
from score.suite.same_golds import same_golds  # noqa: E402
from score.suite.trial_database import TrialDatabase  # noqa: E402
from score.suite.variant_data import RowsDoNotFit, arrow_tables, variant_rows  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("tasks", type=Path)
    p.add_argument("--candidates", type=int, default=12, help="candidates per gold")
    p.add_argument("--db", type=Path, help="base database (default: the embedded one)")
    p.add_argument("--today", default="2026-01-01", help="today of tasks that pin none")
    p.add_argument("--out", type=Path, help="JSON of the golds not reached")
    args = p.parse_args(argv)
    db = args.db or ensure_embedded()
    started = time.perf_counter()
    answerable = [t for t in load_tasks(args.tasks) if t.get("gold_sql")]
    distinct = [members[0] for members in same_golds(answerable).values()]
    with Executor(db, None, settings=ExecutorSettings(threads=1)) as ex:
        queries = prepare_many(ex, [(t["gold_sql"], today_of(t)) for t in distinct], 1)
        rows = [ex.run(q).num_rows if isinstance(q, PreparedQuery) else -1 for q in queries]
    empty = [
        (t, q)
        for t, q, n in zip(distinct, queries, rows, strict=True)
        if n == 0 and isinstance(q, PreparedQuery)
    ]
    today = dt.date.fromisoformat(args.today)
    filled, pools, schemas, vocabulary, focus = read_base(Path(db), None, distinct, today)
    trial = TrialDatabase(vocabulary, timeout_seconds=10, max_rows=10_000)
    missed = []
    try:
        for task, query in empty:
            for n in range(args.candidates):
                made = variant_rows(pools, filled, f"0:{n}", focus[task["id"]], EXACT)
                try:
                    trial.load(arrow_tables(made, schemas))
                except RowsDoNotFit:
                    continue
                result = trial.run(query.sql)
                if isinstance(result, QueryResult) and result.num_rows > 0:
                    break
            else:
                missed.append({"id": task["id"], "gold_sql": task["gold_sql"]})
    finally:
        trial.close()
    reached = len(empty) - len(missed)
    somewhere = sum(1 for n in rows if n > 0) + reached
    print(
        f"distinct golds {len(distinct)}; empty on the base {len(empty)}; reached within "
        f"{args.candidates} candidates each {reached}; with rows somewhere {somewhere} of "
        f"{len(distinct)} ({100 * somewhere / len(distinct):.1f}%); "
        f"{time.perf_counter() - started:.0f} s"
    )
    if args.out:
        args.out.write_text(json.dumps(missed, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
