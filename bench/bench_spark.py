"""The Spark column and the scale figure (``make bench`` runs it after run_bench.py).

    .venv/bin/python bench/bench_spark.py [--tasks N] [--factor 10]

Starts its own local Spark Connect server (``local[2]``, a free port, state in a
temporary folder), loads the embedded CDM, and measures:

1. **scoring over raw Spark**: :func:`score.scoring.run.run_scoring` of the first N
   answerable tasks' reference answers on ``--db sc://...`` (cold gold cache), over the
   same queries (each prediction and each distinct gold once) run by a plain Spark
   Connect session (translated by the same :func:`~score.execution.engines.spark_sql.to_spark`,
   fetched whole as Arrow), and the same ratio on DuckDB for comparison;
2. **scale**: the embedded CDM replicated to ``--factor`` times the persons (every
   non-concept id column of the person-level tables offset by ``copy * 10**8``, the
   vocabulary and shared tables once; deterministic), and the scoring wall of the same
   tasks at 1x and at the factor on DuckDB and on Spark, with each one's growth.

3. **one prediction** (figure 12 on Spark, at 1x): :func:`bench_one_prediction.one_prediction`
   on ``sc://``: a predictions file answering one instance, scored with ``--no-cache``
   (and with the cache an earlier scoring filled), over a plain Connect session running
   that prediction and its gold;
4. **attacks** (last, on the ``--factor`` copy, ``--timeout`` :data:`ATTACK_TIMEOUT` s):
   each of bench_hostile's attacks and Spark's own (a three-way measurement cross join,
   file readers, JVM reflection) through the executor, each one's wall over the time
   limit (target: at most 2x), and then how long a plain session's ``count(*)`` of
   ``person`` takes, over the same before any attack (the server idle again: near 1x).

Writes ``bench/spark.json`` and prints a Markdown table (``bench/spark.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_common import ROOT, embedded_db, log, machine, timed
from bench_one_prediction import one_prediction
from replicate import replicate_cdm

from curate.database import spark_server
from curate.database.spark_load import load_cdm
from score.execution.engines.spark_client import new_session
from score.execution.engines.spark_sql import to_spark
from score.execution.executor import Executor
from score.execution.settings import ExecutorSettings
from score.inputs.task_file import task_file_text
from score.inputs.task_set import load_tasks
from score.scoring.run import ScoringOptions, run_scoring


def workload(tasks_file: Path, n: int, folder: Path) -> tuple[Path, Path, list[str]]:
    """The first ``n`` answerable tasks and their reference answers as predictions."""
    tasks = [t for t in load_tasks(tasks_file) if t["answerable"]][:n]
    tasks_path = folder / "tasks.jsonl"
    preds_path = folder / "predictions.jsonl"
    tasks_path.write_text(task_file_text(tasks), encoding="utf-8")
    sqls = []
    with preds_path.open("w") as f:
        for t in tasks:
            sql = t.get("answer_sql") or t["gold_sql"]
            for lang in t["questions"]:
                sqls.append(sql)
                line = {"task_id": t["id"], "language": lang, "output": f"```sql\n{sql}\n```"}
                f.write(json.dumps(line, ensure_ascii=False) + "\n")
    sqls += sorted({t["gold_sql"] for t in tasks})
    return tasks_path, preds_path, sqls


def pinned_to(db: Path, tasks_path: Path, out: Path) -> Path:
    """The tasks of ``tasks_path`` with their gold results pinned on ``db`` (a copy of
    other size returns other results, which would otherwise all be gold_drift)."""
    from score.comparison.result_hash import result_sha256
    from score.scoring.gold_pin import task_today

    tasks = load_tasks(tasks_path)
    with Executor(str(db)) as ex:
        for t in tasks:
            r = ex.execute(t["gold_sql"], today=task_today(t))
            t["gold_result"] = {
                "sha256": result_sha256(r, ordered=t["order_matters"]),
                "rows": r.num_rows,
                "columns": list(r.columns),
                "types": list(r.types),
            }
    out.write_text(task_file_text(tasks), encoding="utf-8")
    return out


def score_wall(
    db: str, tasks_path: Path, preds_path: Path, work: Path
) -> tuple[float, dict[str, int], float]:
    """Seconds of one scoring (cold gold cache), its outcome counts, and the seconds the
    database's fingerprint took before it (every scoring checks it; a DuckDB file's is
    cached for its exact state, a server's is computed by the server each time), which
    the scoring time leaves out."""
    with Executor(db) as ex:
        ex.execute("SELECT count(*) FROM cdm.person")
        fingerprint_s, _ = timed(lambda: ex.fingerprint)
        out = work / f"run-{time.monotonic_ns()}"
        cache = work / f"cache-{time.monotonic_ns()}"
        start = time.perf_counter()
        done = run_scoring(
            tasks_path,
            preds_path,
            out,
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False, jobs=1),
        )
        wall = time.perf_counter() - start
        return wall, dict(done.summary["outcomes"]["counts"]), fingerprint_s


def raw_spark(url: str, sqls: list[str]) -> float:
    """Seconds for a plain Connect session to run every query once (translated as the
    engine translates them), each stopped at the scoring time limit as the engine
    stops it (a query that scoring times out costs the limit on both sides)."""
    import threading

    timeout = ExecutorSettings().timeout_seconds
    spark = new_session(url)
    spark.conf.set("spark.sql.session.timeZone", "UTC")
    spark.conf.set("spark.sql.ansi.enabled", "false")
    spark.catalog.setCurrentDatabase("cdm")
    translated = [to_spark(s) for s in sqls]
    start = time.perf_counter()
    for sql in translated:
        timer = threading.Timer(timeout, spark.interruptAll)
        timer.start()
        try:
            spark.sql(sql).toArrow()
        except Exception:  # noqa: BLE001 - a named engine difference fails here too
            pass
        finally:
            timer.cancel()
    wall = time.perf_counter() - start
    spark.stop()
    return wall


#: The attack of bench_hostile whose result a local server's heap cannot hold.
SERVER_KILLER = "result too large for Arrow"

#: How long a plain count(*) of person may take after an attack before the server is
#: said to be still busy with it (the attacks stop there: what follows would queue).
PROBE_LIMIT = 60.0

#: The time limit of the attack figure, seconds.
ATTACK_TIMEOUT = 5.0

#: Spark's own attacks, beside bench_hostile's (each ends in a classified outcome).
SPARK_ATTACKS: list[tuple[str, str]] = [
    (
        "three-way measurement cross join",
        "SELECT count(*) FROM cdm.measurement a, cdm.measurement b, cdm.measurement c",
    ),
    ("a file read as a table", "SELECT * FROM parquet.`/etc`"),
    ("JVM reflection", "SELECT reflect('java.lang.System', 'getenv', 'HOME')"),
    (
        "window over a cross join",
        "SELECT max(r) FROM (SELECT row_number() OVER (ORDER BY a.value_as_number) r "
        "FROM cdm.measurement a, cdm.measurement b) t",
    ),
]


def spark_attacks(url: str) -> dict[str, Any]:
    """Each attack through an executor on ``url`` at :data:`ATTACK_TIMEOUT`: its outcome,
    its wall over the limit, and a plain session's ``count(*)`` of ``person`` right after
    it over the same before any attack."""
    from bench_hostile import ATTACKS

    from score.execution.result import QueryError

    probe_sql = "SELECT count(*) FROM person"
    spark = new_session(url)
    spark.catalog.setCurrentDatabase("cdm")

    def probe() -> float:
        """Seconds of the count; raises TimeoutError past :data:`PROBE_LIMIT` (the
        server still busy with what an attack started)."""
        import threading

        fired = threading.Event()

        def stop() -> None:
            fired.set()
            spark.interruptAll()

        timer = threading.Timer(PROBE_LIMIT, stop)
        timer.start()
        try:
            return timed(lambda: spark.sql(probe_sql).toArrow())[0]
        except Exception:
            if fired.is_set():
                raise TimeoutError(f"still busy {PROBE_LIMIT:g} s after the attack") from None
            raise
        finally:
            timer.cancel()

    probe()
    before = median_of([probe() for _ in range(3)])
    rows = []
    settings = ExecutorSettings(timeout_seconds=ATTACK_TIMEOUT)
    with Executor(url, settings=settings) as ex:
        # the result too large for the server's heap last: on a local server it ends the
        # JVM (docs/explanation/spark.md), and nothing can be measured after it
        # Spark's refused attacks first, then bench_hostile's, then the joins Spark may go
        # on computing after their cancel (docs/explanation/spark.md), then the one that may end it
        last = [a for a in ATTACKS if a[0] == SERVER_KILLER]
        heavy = [a for a in SPARK_ATTACKS if "cross join" in a[0]]
        order = [*(a for a in SPARK_ATTACKS if a not in heavy)]
        order += [*(a for a in ATTACKS if a not in last), *heavy, *last]
        for name, sql in order:
            start = time.perf_counter()
            try:
                ex.execute(sql)
                outcome = "ran"
            except QueryError as e:
                outcome = f"{e.kind}: {e.message[:80]}"
            wall = time.perf_counter() - start
            try:
                after = probe()
            except Exception as e:  # noqa: BLE001 - the server is gone, or still busy
                state = "busy" if isinstance(e, TimeoutError) else "stopped"
                rows.append(
                    {
                        "attack": name,
                        "outcome": outcome,
                        "wall_s": wall,
                        "over_limit": wall / ATTACK_TIMEOUT,
                        "probe_after_s": None,
                        "server": f"{state}: {str(e).splitlines()[0][:120]}",
                    }
                )
                log(f"  {name}: {outcome} in {wall:.2f} s; the server: {state} ({e})")
                break
            rows.append(
                {
                    "attack": name,
                    "outcome": outcome,
                    "wall_s": wall,
                    "over_limit": wall / ATTACK_TIMEOUT,
                    "probe_after_s": after,
                    "probe_ratio": after / before,
                }
            )
            log(f"  {name}: {outcome} in {wall:.2f} s; count(*) after {after:.2f} s")
    spark.stop()
    return {
        "timeout_s": ATTACK_TIMEOUT,
        "probe_before_s": before,
        "attacks": rows,
        "max_over_limit": max(r["over_limit"] for r in rows),
        "max_probe_ratio": max(r["probe_ratio"] for r in rows if "probe_ratio" in r),
        "server_not_idle_after": {r["attack"]: r["server"] for r in rows if "server" in r},
    }


def median_of(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def raw_duckdb(db: Path, sqls: list[str]) -> float:
    from bench_common import RawDuckDB

    raw = RawDuckDB(db)
    start = time.perf_counter()
    for sql in sqls:
        raw.run(sql)
    return time.perf_counter() - start


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", type=Path, default=embedded_db())
    p.add_argument("--tasks-file", type=Path, default=ROOT / "data/benchmark/omop_tasks.jsonl")
    p.add_argument("--tasks", type=int, default=40, help="answerable tasks in the workload")
    p.add_argument("--factor", type=int, default=10)
    p.add_argument("--out", type=Path, default=ROOT / "bench" / "spark.json")
    args = p.parse_args(argv)
    if not spark_server.java_available():
        log("bench_spark: java is not on PATH; no Spark figures")
        return 0
    with tempfile.TemporaryDirectory(prefix="sqlgold-spark-bench-") as tmp:
        work = Path(tmp)
        port = spark_server.free_port()
        url = f"sc://localhost:{port}"
        log(f"bench_spark: starting a local Spark Connect server on {port}")
        spark_server.start(port, work / "spark", persistent=False)
        try:
            tasks_path, preds_path, sqls = workload(args.tasks_file, args.tasks, work)
            results: dict[str, Any] = {
                "tasks": args.tasks,
                "queries": len(sqls),
                "factor": args.factor,
                "machine": machine(),
            }
            big = work / f"cdm_x{args.factor}.duckdb"
            log(f"bench_spark: replicating the CDM {args.factor}x")
            replicate_cdm(args.db, big, args.factor)
            for label, db in (("1x", args.db), (f"{args.factor}x", big)):
                log(f"bench_spark: loading {label} into Spark")
                load_s, _ = timed(lambda db=db: load_cdm(db, url))
                log(f"bench_spark: loaded in {load_s:.0f} s; warming up")
                raw_spark(url, sqls)  # warm-up: Spark reads the Parquet files once
                duck_raw = raw_duckdb(db, sqls)
                spark_raw = raw_spark(url, sqls)
                log(
                    f"bench_spark: raw DuckDB {duck_raw:.1f} s, raw Spark {spark_raw:.1f} s; "
                    f"scoring {label} on DuckDB and on Spark"
                )
                pinned = pinned_to(db, tasks_path, work / f"tasks_{label}.jsonl")
                duck_score, duck_outcomes, duck_fp = score_wall(str(db), pinned, preds_path, work)
                spark_score, spark_outcomes, spark_fp = score_wall(url, pinned, preds_path, work)
                log(f"bench_spark: scoring DuckDB {duck_score:.1f} s, Spark {spark_score:.1f} s")
                if label == "1x":
                    log("bench_spark: one prediction on Spark")
                    single = work / "one"
                    single.mkdir()
                    with Executor(url) as ex:
                        results["one_prediction"] = one_prediction(
                            ex, args.tasks_file, single, 3, lambda q: raw_spark(url, q)
                        )
                results[label] = {
                    "load_s": load_s,
                    "duckdb_fingerprint_s": duck_fp,
                    "spark_fingerprint_s": spark_fp,
                    "duckdb_outcomes": duck_outcomes,
                    "spark_outcomes": spark_outcomes,
                    "duckdb_raw_s": duck_raw,
                    "duckdb_score_s": duck_score,
                    "spark_raw_s": spark_raw,
                    "spark_score_s": spark_score,
                    "duckdb_overhead": duck_score / duck_raw,
                    "spark_overhead": spark_score / spark_raw,
                }
            # last: an attack can end a local server's JVM (docs/explanation/spark.md)
            log(f"bench_spark: attacks at --timeout {ATTACK_TIMEOUT:g}, {args.factor}x data")
            results["attacks"] = spark_attacks(url)
            one, many = results["1x"], results[f"{args.factor}x"]
            results["growth"] = {
                "duckdb_score": many["duckdb_score_s"] / one["duckdb_score_s"],
                "spark_score": many["spark_score_s"] / one["spark_score_s"],
                "duckdb_raw": many["duckdb_raw_s"] / one["duckdb_raw_s"],
                "spark_raw": many["spark_raw_s"] / one["spark_raw_s"],
            }
        finally:
            spark_server.stop(work / "spark")
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    table = render(results)
    args.out.with_suffix(".md").write_text(table)
    print(table)
    return 0


def render(r: dict[str, Any]) -> str:
    f = r["factor"]
    one, many, g = r["1x"], r[f"{f}x"], r["growth"]
    return "\n".join(
        [
            f"Spark column: {r['tasks']} tasks' reference answers, {r['queries']} queries, "
            "cold gold cache, one run.",
            "",
            "| figure | DuckDB | Spark |",
            "| --- | --- | --- |",
            f"| scoring wall / raw execution, 1x | {one['duckdb_overhead']:.2f}x | "
            f"{one['spark_overhead']:.2f}x |",
            f"| scoring wall / raw execution, {f}x | {many['duckdb_overhead']:.2f}x | "
            f"{many['spark_overhead']:.2f}x |",
            f"| scoring wall growth 1x -> {f}x persons | {g['duckdb_score']:.2f}x | "
            f"{g['spark_score']:.2f}x |",
            f"| raw execution growth 1x -> {f}x persons | {g['duckdb_raw']:.2f}x | "
            f"{g['spark_raw']:.2f}x |",
            f"| correct instances, 1x / {f}x | {_correct(one, 'duckdb')} / "
            f"{_correct(many, 'duckdb')} | {_correct(one, 'spark')} / {_correct(many, 'spark')} |",
            f"| db load into Spark, 1x / {f}x | – | {one.get('load_s', 0):.0f} s / "
            f"{many.get('load_s', 0):.0f} s |",
            f"| fingerprint checked when scoring starts, 1x / {f}x (not in the scoring wall; "
            f"DuckDB's cached for the file's state) | {one['duckdb_fingerprint_s']:.1f} s / "
            f"{many['duckdb_fingerprint_s']:.1f} s | {one['spark_fingerprint_s']:.1f} s / "
            f"{many['spark_fingerprint_s']:.1f} s |",
            "",
            *_single_and_attacks(r),
        ]
    )


def _single_and_attacks(r: dict[str, Any]) -> list[str]:
    lines = []
    one = r.get("one_prediction")
    if one:
        lines += [
            f"One prediction of {one['instances']:.0f} instances on Spark, 1x (figure 12): "
            f"scoring with --no-cache {one['scoring_s']:.2f} s, with the cache an earlier "
            f"scoring filled {one['scoring_cached_s']:.2f} s, without the priors "
            f"{one['scoring_without_priors_s']:.2f} s; running the prediction and its gold "
            f"on a plain session {one['direct_s']:.2f} s: **{one['ratio']:.1f}x** "
            f"(cached {one['ratio_cached']:.1f}x; target 2x); gold queries run "
            f"{one['gold_executions']:.0f}.",
            "",
        ]
    att = r.get("attacks")
    if att:
        lines += [
            f"Attacks on Spark, {r['factor']}x, time limit {att['timeout_s']:g} s; a plain "
            f"session's count(*) of person took {att['probe_before_s']:.2f} s before any attack "
            f"(worst wall / limit **{att['max_over_limit']:.2f}** (target 2); worst "
            f"count(*) after an attack / before {att['max_probe_ratio']:.2f}):",
            "",
            "| attack | outcome | wall / limit | count(*) after, s |",
            "| --- | --- | --- | --- |",
            *(
                f"| {a['attack']} | {a['outcome'].replace('|', '/')} | "
                f"{a['over_limit']:.2f} | "
                + (f"{a['probe_after_s']:.2f}" if a["probe_after_s"] is not None else a["server"])
                + " |"
                for a in att["attacks"]
            ),
            "",
        ]
    return lines


def _correct(size: dict[str, Any], engine: str) -> str:
    counts = size.get(f"{engine}_outcomes") or {}
    return f"{counts.get('correct', 0)} of {sum(counts.values())}"


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    sys.exit(main(sys.argv[1:]))
