"""Hostile SQL and hostile inputs end in an outcome, never in a dead run, a read file or
an unbounded process.

Every row of the red-team table is fed through ``score run`` with short limits (a 1 s
timeout, a 400 MB memory limit), so the attacks stay cheap: each is stopped by the
guard, by DuckDB's memory limit, by the worker's address-space limit, or by killing its
worker at the time limit, and the run goes on to the next instance.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.execution.executor import Executor, ExecutorSettings
from score.inputs.validated_files import MEMO_FOLDER
from score.scoring.gold_cache import GoldCache
from score.scoring.outcomes import Outcome
from score.scoring.prior_cache import PRIOR_FOLDER
from score.scoring.run import ScoringOptions, run_scoring
from tests.task_factory import make_task, write_task_file

LIMITS = ["--timeout", "1", "--memory-limit", "400MB"]


def nested_parens(n: int) -> str:
    return "SELECT " + "(" * n + "1" + ")" * n + " AS n"


def nested_case(n: int) -> str:
    return "SELECT " + "CASE WHEN 1 = 1 THEN " * n + "1" + " END" * n + " AS n"


def nested_subqueries(n: int) -> str:
    return "SELECT n FROM " + "(SELECT n FROM " * n + "(SELECT 1 AS n) t" + ") t" * n


#: (task id, predicted SQL, expected outcome, words the reason must hold)
ATTACKS = [
    # sqlglot cannot follow these; DuckDB's parser reads them and the guard's name rules
    # judge what it reports, so an honest deep query still runs
    ("deep_parens_42", nested_parens(42), Outcome.CORRECT, ""),
    ("deep_case_60", nested_case(60), Outcome.CORRECT, ""),
    ("deep_subqueries_200", nested_subqueries(200), Outcome.CORRECT, ""),
    (
        "deep_read_text",
        "SELECT " + "(" * 150 + "(SELECT content FROM read_text('/etc/hostname'))" + ")" * 150,
        Outcome.BUILD_ERROR,
        "read_text",
    ),
    # Arrow string overflow / result size
    ("repeat_rows", "SELECT repeat('x', 10000000) FROM range(300)", Outcome.EXECUTE_ERROR, ""),
    # the interrupt fires while batches stream
    (
        "timeout_mid_stream",
        "SELECT * FROM range(3000) t(n) UNION ALL "
        "SELECT count(*) FROM cdm.measurement a, cdm.measurement b",
        Outcome.EXECUTE_ERROR,
        "time limit",
    ),
    # values Python cannot hold
    ("infinity_date", "SELECT 'infinity'::DATE AS n", Outcome.MISMATCH, ""),
    ("minus_infinity_timestamp", "SELECT '-infinity'::TIMESTAMP AS n", Outcome.MISMATCH, ""),
    ("far_future_date", "SELECT '294247-01-10'::DATE AS n", Outcome.MISMATCH, ""),
    # DuckDB cannot interrupt one huge string function: its worker is killed and replaced
    (
        "uninterruptible",
        # one call DuckDB cannot interrupt: ~3 s here, twice the 1.5 s kill (a 200 MB
        # repeat() took 1.1-1.4 s on this machine, and its interrupt then came in time)
        "SELECT length(lpad('x', 200000000, 'y')) AS n",
        Outcome.EXECUTE_ERROR,
        "process was ended",
    ),
    # memory that DuckDB's memory_limit does not track
    ("huge_repeat", "SELECT length(repeat('x', 4000000000)) AS n", Outcome.EXECUTE_ERROR, "Memory"),
    ("huge_list", "SELECT len(range(300000000)) AS n", Outcome.EXECUTE_ERROR, "Memory"),
    ("huge_sort", "SELECT len(list_sort(range(200000000))) AS n", Outcome.EXECUTE_ERROR, "Memory"),
    # long texts are refused before parsing
    ("long_sum", "SELECT " + "1+" * 5_000_000 + "1", Outcome.BUILD_ERROR, "over the limit"),
    (
        "long_in_list",
        "SELECT 1 WHERE 1 IN (" + ",".join(map(str, range(1_500_000))) + ")",
        Outcome.BUILD_ERROR,
        "over the limit",
    ),
    (
        "union_10000",
        " UNION ALL ".join(["SELECT 1"] * 10_000),
        Outcome.BUILD_ERROR,
        "over the limit",
    ),
    *[
        (
            f"large_{i}",
            f"SELECT {i} AS n WHERE " + " OR ".join(["1 = 1"] * 100_000),
            Outcome.BUILD_ERROR,
            "over the limit",
        )
        for i in range(3)
    ],
    # files and paths
    (
        "quoted_read_text",
        "SELECT content FROM \"read_text\"('.tmp/x.txt')",
        Outcome.BUILD_ERROR,
        "read_text",
    ),
    ("quoted_glob", "SELECT * FROM \"GLOB\"('.tmp/*')", Outcome.BUILD_ERROR, "glob"),
    (
        "read_blob",
        "SELECT size FROM main.\"read_blob\"('data/omop/synthea1k.duckdb')",
        Outcome.BUILD_ERROR,
        "read_blob",
    ),
    ("databases", "SELECT path FROM duckdb_databases()", Outcome.BUILD_ERROR, "paths"),
    ("database_list", "SELECT * FROM pragma_database_list", Outcome.BUILD_ERROR, "paths"),
    ("setting", "SELECT current_setting('secret_directory')", Outcome.BUILD_ERROR, "settings"),
    ("settings_view", 'SELECT * FROM "Duckdb_Settings"', Outcome.BUILD_ERROR, "settings"),
    # state that outlives the rolled-back transaction
    ("setseed", "SELECT setseed(0.42) AS n", Outcome.BUILD_ERROR, "setseed"),
    # a mislabel: DuckDB calls IMPORT DATABASE a PRAGMA
    ("import_database", "IMPORT DATABASE '/tmp/x'", Outcome.BUILD_ERROR, "IMPORT DATABASE"),
]


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def results_by_id(out: Path) -> dict[str, dict]:
    with (out / "results.jsonl").open(encoding="utf-8") as f:
        return {r["task_id"]: r for r in map(json.loads, f)}


def score_cli(*args: str):
    return CliRunner().invoke(main, ["score", "run", *args, "--split", "all", "-q"])


def score_uncached(db: Path, tasks: Path, preds: Path, out: Path, *extra: str):
    """``score run`` at the short limits with no gold cache, writing to ``out``."""
    return score_cli(
        str(tasks), str(preds), "--out", str(out), "--db", str(db), "--no-cache", *LIMITS, *extra
    )


def test_every_attack_ends_in_its_outcome_and_the_run_completes(omop_db, tmp_path, monkeypatch):
    (tmp_path / ".tmp").mkdir()
    (tmp_path / ".tmp" / "x.txt").write_text("a host file\n")
    monkeypatch.chdir(tmp_path)  # DuckDB's default temp directory would be ./.tmp
    tasks = write_task_file(
        tmp_path / "tasks.jsonl",
        [make_task(t, "SELECT 1 AS n", expect=((1,),)) for t, *_ in ATTACKS],
    )
    preds = write_jsonl(
        tmp_path / "preds.jsonl", [{"task_id": t, "sql": sql} for t, sql, *_ in ATTACKS]
    )
    out = tmp_path / "run"
    result = score_uncached(omop_db, tasks, preds, out)
    assert result.exit_code == 0, result.output
    records = results_by_id(out)
    assert len(records) == len(ATTACKS)
    for task_id, _, outcome, words in ATTACKS:
        record = records[task_id]
        assert record["outcome"] == outcome, (task_id, record["reason"])
        assert words in record["reason"], (task_id, record["reason"])
    assert "a host file" not in (out / "results.jsonl").read_text()
    assert (out / "summary.json").is_file()


def test_hostile_golds_are_gold_errors_never_a_dead_run(omop_db, tmp_path):
    tasks = [
        make_task("deep_gold", nested_subqueries(200), expect=((1,),)),
        make_task("deep_parens_gold", nested_parens(300), expect=((1,),)),
        make_task("oom_gold", "SELECT len(range(300000000)) AS n"),
        make_task("slow_gold", "SELECT length(lpad('x', 200000000, 'y')) AS n"),
        make_task("honest", "SELECT 1 AS n", expect=((1,),)),
    ]
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = write_jsonl(
        tmp_path / "preds.jsonl", [{"task_id": t["id"], "sql": "SELECT 1 AS n"} for t in tasks]
    )
    settings = ExecutorSettings(timeout_seconds=1.0, memory_limit="400MB")
    cache = tmp_path / "cache"
    with Executor(omop_db, settings=settings) as ex:
        first = run_scoring(
            tasks_path,
            preds,
            tmp_path / "a",
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False),
        )
        records = results_by_id(tmp_path / "a")
        assert records["deep_gold"]["outcome"] == Outcome.CORRECT
        assert records["honest"]["outcome"] == Outcome.CORRECT
        for task_id in ("oom_gold", "slow_gold"):
            assert records[task_id]["outcome"] == Outcome.GOLD_ERROR, records[task_id]
        # each failing gold was retried once in a fresh worker; only successes are stored
        assert first.gold_executions == 3 + 2 * 2
        stored = sorted(
            p.suffix
            for p in cache.rglob("*")
            if p.is_file() and MEMO_FOLDER not in p.parts and PRIOR_FOLDER not in p.parts
        )
        assert stored == [".arrow"] * 3
        # a later run runs only the failed golds again
        second = run_scoring(
            tasks_path,
            preds,
            tmp_path / "b",
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False),
        )
        assert second.gold_executions == 2 * 2


def test_memory_hogs_beside_honest_answers_under_jobs_cache_no_gold_error(omop_db, tmp_path):
    honest = [
        make_task(f"h{i}", f"SELECT count(*) + {i} AS n FROM cdm.person", expect=((1130 + i,),))
        for i in range(6)
    ]
    hogs = [make_task(f"x{i}", "SELECT 1 AS n", expect=((1,),)) for i in range(6)]
    tasks = write_task_file(tmp_path / "tasks.jsonl", honest + hogs)
    lines = [{"task_id": t["id"], "sql": t["gold_sql"]} for t in honest]
    lines += [{"task_id": t["id"], "sql": "SELECT len(range(300000000)) AS n"} for t in hogs]
    preds = write_jsonl(tmp_path / "preds.jsonl", lines)
    cache = tmp_path / "cache"
    args = ["--db", str(omop_db), "--cache", str(cache), "--memory-limit", "400MB"]
    result = score_cli(str(tasks), str(preds), "--out", str(tmp_path / "a"), "--jobs", "2", *args)
    assert result.exit_code == 0, result.output
    records = results_by_id(tmp_path / "a")
    assert {records[t["id"]]["outcome"] for t in honest} == {Outcome.CORRECT}
    assert {records[t["id"]]["outcome"] for t in hogs} == {Outcome.EXECUTE_ERROR}
    # no failure is ever cached (the priors' summaries are kept beside the gold results)
    assert not [p for p in cache.rglob("*.json") if PRIOR_FOLDER not in p.parts]
    assert list((cache / PRIOR_FOLDER).glob("*.json"))
    again = score_cli(str(tasks), str(preds), "--out", str(tmp_path / "b"), *args)
    assert again.exit_code == 0 and "gold queries executed 0" in again.output


def test_csv_index_files_are_confined_to_the_index_folder(omop_db, tmp_path):
    folder = tmp_path / "index"
    folder.mkdir()
    (folder / "good.csv").write_text("n\n1\n")
    (folder / "hostname.csv").symlink_to("/etc/hostname")
    os.mkfifo(folder / "fifo.csv")
    cases = {
        "good": ("good.csv", Outcome.CORRECT, ""),
        "passwd": ("/etc/passwd", Outcome.EXECUTE_ERROR, "outside the index's folder"),
        "parent": (os.path.relpath("/etc/hostname", folder), Outcome.EXECUTE_ERROR, "outside"),
        "symlink": ("hostname.csv", Outcome.EXECUTE_ERROR, "outside"),
        "fifo": ("fifo.csv", Outcome.EXECUTE_ERROR, "not a regular file"),
        "zero": ("/dev/zero", Outcome.EXECUTE_ERROR, "outside"),
        "missing": ("missing.csv", Outcome.EXECUTE_ERROR, "no such file"),
        "not_csv": ("bad.csv", Outcome.EXECUTE_ERROR, "cannot read"),
    }
    (folder / "bad.csv").write_bytes(b"\x00\xff" * 10)
    tasks = write_task_file(
        tmp_path / "tasks.jsonl", [make_task(t, "SELECT 1 AS n", expect=((1,),)) for t in cases]
    )
    index = write_jsonl(
        folder / "index.jsonl", [{"task_id": t, "csv": c[0]} for t, c in cases.items()]
    )
    out = tmp_path / "run"
    result = score_uncached(omop_db, tasks, index, out)
    assert result.exit_code == 0, result.output
    records = results_by_id(out)
    for task_id, (_, outcome, words) in cases.items():
        assert records[task_id]["outcome"] in (outcome,), (task_id, records[task_id]["reason"])
        assert words in records[task_id]["reason"], (task_id, records[task_id]["reason"])
    assert "root:" not in (out / "results.jsonl").read_text()


BAD_LINES = [
    (b'{"task_id": "t1", "sql": "SELECT \xff 1"}', "not UTF-8"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"task_id": "t1", "sql": "SELECT 1", "context": ' + b"9" * 5000 + b"}", "not readable"),
    (b'{"task_id": "t1", "sql": "SELECT \\ud800"}', "lone surrogate"),
]


@pytest.mark.parametrize(("line", "named"), BAD_LINES, ids=[n for _, n in BAD_LINES])
def test_bad_prediction_lines_are_named_problems(omop_db, tmp_path, line, named):
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1"), make_task("t2")])
    preds = tmp_path / "preds.jsonl"
    good = b'{"task_id": "t2", "sql": "SELECT count(*) AS n FROM cdm.person"}'
    preds.write_bytes(good + b"\n" + line + b"\n")
    strict = score_uncached(omop_db, tasks, preds, tmp_path / "a")
    assert strict.exit_code == 1
    assert strict.output.count("\n") == 1 and "line 2" in strict.output and named in strict.output
    lenient = score_uncached(omop_db, tasks, preds, tmp_path / "b", "--lenient")
    assert lenient.exit_code == 0, lenient.output
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert len(summary["input_problems"]) == 1 and named in summary["input_problems"][0]
    records = results_by_id(tmp_path / "b")
    assert records["t2"]["outcome"] == Outcome.CORRECT
    assert records["t1"]["outcome"] == Outcome.MISSING


def test_a_raw_carriage_return_inside_a_record_is_one_line(omop_db, tmp_path):
    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task("t1"), make_task("t2")])
    preds = tmp_path / "preds.jsonl"
    preds.write_bytes(
        b'{"task_id": "t1",\r "sql": "SELECT count(*) AS n FROM cdm.person"}\n'
        b'{"task_id": "t2", "sql": "SELECT 1\rAS n"}\n'
    )
    result = score_uncached(omop_db, tasks, preds, tmp_path / "a", "--lenient")
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["input_problems"] == [
        "line 2: not JSON: Invalid control character at (column 35)"
    ]
    assert results_by_id(tmp_path / "a")["t1"]["outcome"] == Outcome.CORRECT


def test_a_gold_cache_stores_only_successes(omop_db, tmp_path):
    settings = ExecutorSettings(timeout_seconds=1.0, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        cache = GoldCache(tmp_path, ex)
        failed = cache.result("SELECT len(range(300000000))")
        assert failed.kind == "runtime_error" and cache.executions == 2
        assert cache.result("SELECT len(range(300000000))") is failed  # remembered in memory
        assert cache.executions == 2
        assert cache.result("SELECT 1").rows() == [(1,)]
    assert [p.suffix for p in tmp_path.rglob("*") if p.is_file()] == [".arrow"]
