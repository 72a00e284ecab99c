"""Figure 8: scoring on PostgreSQL against raw PostgreSQL, next to DuckDB's figure 1.

The workload is figure 1's (the project's tasks repeated to N instances, each answered
with its reference answer, a distinct first-line comment per instance), loaded into a
PostgreSQL server: ``--pg-url`` (an administrator's URL; the CDM is loaded into it with
``sqlgold db load``) or, by default, a throwaway server started like the tests' one.

What is timed is :func:`score.scoring.run.run_scoring` with a warm gold cache on an
:class:`~score.execution.executor.Executor` opened as ``sqlgold_reader``, twice: with the
predictions written in PostgreSQL SQL (the reference answers transpiled beforehand;
the ratio with the target) and with the DuckDB answers and ``dialect="duckdb"`` (each
answer transpiled in the scoring, as ``score run --dialect duckdb`` does).  The raw
time is the same PostgreSQL SQL run by plain psycopg as the same role, one connection,
autocommit, ``cursor.execute(sql); cursor.fetchall()``: no guard, no transaction, no
cursor, no Arrow, no sandbox process.  Each scoring is divided by the mean of the raw
passes just before and after it.  Figure 12's one-prediction scoring is measured on the
same server and executor (:mod:`bench_one_prediction`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from bench_common import ROOT, clocked, embedded_db, log, median
from bench_one_prediction import first_answerable, one_prediction
from bench_scoring import answer_of, gold_sqls, predicted_sqls, repeated_tasks, write_workload

from score.execution.engines.postgres_sql import transpile_to_postgres
from score.execution.executor import Executor
from score.inputs.task_set import instances, load_tasks
from score.scoring.run import ScoringOptions, run_scoring


class RawPostgres:
    """Plain psycopg: one autocommit connection, execute and fetch every row."""

    def __init__(self, url: str) -> None:
        import psycopg

        self.conn = psycopg.connect(url, autocommit=True)

    def run_all(self, sqls: list[str]) -> None:
        with self.conn.cursor() as cur:
            for sql in sqls:
                cur.execute(sql)
                cur.fetchall()

    def clocked(self, sqls: list[str]) -> tuple[float, float, None]:
        return clocked(lambda: self.run_all(sqls))

    def close(self) -> None:
        self.conn.close()


def _server(pg_url: str | None):
    """(admin URL, a stop function): the given server, or a throwaway one."""
    if pg_url:
        return pg_url, lambda: None
    sys.path.insert(0, str(ROOT))
    from tests.pg_server import start_server

    server = start_server()
    return server.url(), server.stop


def _pg_workload(tasks: list[dict[str, Any]], folder: Path) -> tuple[Path, Path]:
    """Figure 1's workload with every reference answer transpiled to PostgreSQL SQL."""
    pg_tasks = [
        {**t, "answer_sql": transpile_to_postgres(answer_of(t)) if t["answerable"] else None}
        for t in tasks
    ]
    tasks_path, preds_path = write_workload(pg_tasks, folder)
    return tasks_path, preds_path


def postgres_overhead(
    db: Path, tasks_file: Path, n_instances: int, runs: int, work: Path, pg_url: str | None
) -> dict[str, Any]:
    from curate.database.load import load_into_postgres

    admin, stop = _server(pg_url)
    try:
        report = load_into_postgres(admin, db)
        reader = report.reader_url
        tasks = repeated_tasks(load_tasks(tasks_file), n_instances)
        n = len(instances(tasks))
        duck_folder, pg_folder = work / "duckdb", work / "postgres"
        duck_folder.mkdir()
        pg_folder.mkdir()
        tasks_path, duck_preds = write_workload(tasks, duck_folder)
        _, pg_preds = _pg_workload(tasks, pg_folder)
        preds = [transpile_to_postgres(s) for s in predicted_sqls(tasks)]
        golds = [transpile_to_postgres(s) for s in gold_sqls(tasks)]
        log(f"postgres: {n} instances, {len(preds)} predicted queries, {runs} runs")
        raw = RawPostgres(reader)
        per_run = []
        with Executor(reader) as ex:
            cache = work / "cache"

            def score(preds_file: Path, out: str, dialect: str | None):
                return clocked(
                    lambda: run_scoring(
                        tasks_path,
                        preds_file,
                        work / out,
                        ex,
                        ScoringOptions(cache_dir=cache, with_priors=False, jobs=1, dialect=dialect),
                    )
                )

            raw.run_all(preds + golds)  # warm-up, and the gold cache filled untimed
            _, _, first = score(duck_preds, "warmup", "duckdb")
            for i in range(runs):
                r0 = raw.clocked(preds)
                pg_w, _, pg_out = score(pg_preds, f"pg-{i}", None)
                r1 = raw.clocked(preds)
                dd_w, _, dd_out = score(duck_preds, f"duckdb-{i}", "duckdb")
                r2 = raw.clocked(preds)
                row = {
                    "raw_predicted_s": median([r0[0], r1[0], r2[0]]),
                    "warm_s": pg_w,
                    "warm_duckdb_dialect_s": dd_w,
                    "ratio_warm": pg_w / ((r0[0] + r1[0]) / 2),
                    "ratio_warm_duckdb_dialect": dd_w / ((r1[0] + r2[0]) / 2),
                    "ex": pg_out.summary["ex"],
                    "ex_duckdb_dialect": dd_out.summary["ex"],
                    "gold_executions": pg_out.gold_executions + dd_out.gold_executions,
                }
                per_run.append(row)
                log(
                    f"  run {i + 1}: raw {r0[0]:.2f}/{r1[0]:.2f}/{r2[0]:.2f} s, scoring "
                    f"{pg_w:.2f} s (x{row['ratio_warm']:.2f}), with --dialect duckdb "
                    f"{dd_w:.2f} s (x{row['ratio_warm_duckdb_dialect']:.2f}); EX "
                    f"{row['ex']:.3f} / {row['ex_duckdb_dialect']:.3f}"
                )
            one = work / "one"
            one.mkdir()
            task = first_answerable(tasks_file)
            single = one_prediction(
                ex,
                tasks_file,
                one,
                runs,
                lambda sqls: raw.clocked(sqls)[0],
                prediction=transpile_to_postgres(task["answer_sql"]),
                gold=transpile_to_postgres(task["gold_sql"]),
            )
        raw.close()
    finally:
        stop()
    return {
        "instances": n,
        "predicted_queries": len(preds),
        "loaded_tables": len(report.tables),
        "gold_executions_first_run": first.gold_executions,
        "one_prediction": single,
        **{k: median(r[k] for r in per_run) for k in per_run[0]},
        "runs": per_run,
    }


if __name__ == "__main__":  # a quick look: python bench/bench_postgres.py [N]
    import tempfile

    from bench_scoring import default_tasks

    with tempfile.TemporaryDirectory() as tmp:
        n = int(sys.argv[1]) if len(sys.argv) > 1 else 451
        db = embedded_db()
        print(
            json.dumps(
                postgres_overhead(db, default_tasks(), n, 1, Path(tmp), None), indent=1, default=str
            )
        )
