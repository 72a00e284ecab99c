"""Scoring end to end on the real database: every outcome class from a real query, the
denominator, the gold cache, resume after a kill, and the project's own benchmark."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError
from score.inputs.predictions import Prediction
from score.inputs.task_set import load_tasks
from score.scoring.gold_cache import GoldCache
from score.scoring.outcomes import Outcome
from score.scoring.pipeline import ScoringContext
from score.scoring.run import ScoringOptions, run_scoring
from score.scoring.run_folder import read_run
from tests.paths import REPO
from tests.task_factory import make_task, scored_records, write_task_file

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
COUNT = "SELECT count(*) AS n FROM cdm.person"


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def pred(task_id: str, **fields) -> Prediction:
    kind = "sql" if "sql" in fields else "output"
    return Prediction(task_id, fields.pop("language", "en"), "test", kind=kind, **fields)


@pytest.fixture(scope="module")
def small_executor(omop_db):
    settings = ExecutorSettings(timeout_seconds=1.0, max_rows=100)
    with Executor(omop_db, settings=settings) as ex:
        yield ex


def score_one(task: dict, prediction: Prediction | None, executor) -> dict:
    ctx = ScoringContext(executor, GoldCache(None, executor), "sqlgold", "test")
    preds = {} if prediction is None else {prediction.key: prediction}
    (record,) = list(scored_records([task], preds, ctx))
    return record


CASES = [
    ("correct", dict(sql="SELECT COUNT(person_id) FROM cdm.person"), Outcome.CORRECT),
    (
        "correct_from_text",
        dict(output="Here:\n```sql\nSELECT count(*) FROM person\n```"),
        Outcome.CORRECT,
    ),
    ("mismatch", dict(sql="SELECT 1130.5 AS n"), Outcome.MISMATCH),
    ("runtime", dict(sql="SELECT CAST('x' AS INTEGER)"), Outcome.EXECUTE_ERROR),
    (
        "binder",
        dict(sql="SELECT person_id FROM cdm.person GROUP BY gender_concept_id"),
        Outcome.EXECUTE_ERROR,
    ),
    ("row_cap", dict(sql="SELECT * FROM cdm.person"), Outcome.EXECUTE_ERROR),
    (
        "timeout",
        dict(sql="SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b"),
        Outcome.EXECUTE_ERROR,
    ),
    ("unknown_table", dict(sql="SELECT count(*) FROM cdm.patients"), Outcome.RENDER_ERROR),
    ("unknown_column", dict(sql="SELECT count(patient_id) FROM cdm.person"), Outcome.RENDER_ERROR),
    ("not_a_select", dict(sql="DROP VIEW cdm.person"), Outcome.BUILD_ERROR),
    ("two_statements", dict(sql="SELECT 1; SELECT 2"), Outcome.BUILD_ERROR),
    ("not_sql", dict(output="```sql\nSELECT FROM WHERE GROUP\n```"), Outcome.PARSE_ERROR),
    ("generation", dict(status="generation_error"), Outcome.GENERATION_ERROR),
    ("abstain", dict(output="```\nABSTAIN\n```"), Outcome.ABSTAINED),
    ("null", dict(sql=None), Outcome.ABSTAINED),
    ("cut_off", dict(output="Let me think step by step about", status="cut_off"), Outcome.CUT_OFF),
    ("format", dict(output="There are many persons."), Outcome.FORMAT_FAILURE),
]


@pytest.mark.parametrize(("name", "fields", "outcome"), CASES, ids=[c[0] for c in CASES])
def test_each_outcome_class_from_a_real_prediction(small_executor, name, fields, outcome):
    record = score_one(make_task("t"), pred("t", **fields), small_executor)
    assert record["outcome"] == outcome, record["reason"]
    assert record["reason"]


def test_missing_and_gold_error(small_executor):
    assert score_one(make_task("t"), None, small_executor)["outcome"] == Outcome.MISSING
    broken = make_task("g", "SELECT nope FROM cdm.person")
    record = score_one(broken, pred("g", sql=COUNT), small_executor)
    assert record["outcome"] == Outcome.GOLD_ERROR and "gold" in record["reason"]


def test_unanswerable_tasks_expect_abstention(small_executor):
    task = make_task("u", None)
    abstained = score_one(task, pred("u", output="ABSTAIN"), small_executor)
    assert abstained["outcome"] == Outcome.ABSTAINED
    answered = score_one(task, pred("u", sql="SELECT count(*) FROM cdm.note"), small_executor)
    assert answered["outcome"] == Outcome.MISMATCH and "unanswerable" in answered["reason"]


def test_record_carries_what_was_run(small_executor):
    record = score_one(
        make_task("t"), pred("t", output="```sql\n" + COUNT + "\n```"), small_executor
    )
    assert record["sql"] == COUNT and record["executed_sql"] == COUNT
    assert record["lf_match"] is True
    assert {"execute_s", "compare_s", "total_s"} <= set(record["timings"])


def test_a_mismatch_carries_its_cause_and_a_match_none(small_executor):
    near = "SELECT count(*) + 0.004 AS n FROM cdm.person"
    rounded = score_one(make_task("t"), pred("t", sql=near), small_executor)
    assert rounded["outcome"] == Outcome.MISMATCH
    assert rounded["mismatch_cause"] == {
        "name": "rounding",
        "detail": "equal to 2 decimal places, not beyond",
    }
    extra = score_one(
        make_task("t"), pred("t", sql=COUNT.replace("AS n", "AS n, 1 AS one")), small_executor
    )
    assert extra["mismatch_cause"]["name"] == "column_extra"
    right = score_one(make_task("t"), pred("t", sql=COUNT), small_executor)
    assert "mismatch_cause" not in right


def test_denominator_is_every_instance(small_executor):
    tasks = [make_task("a", languages=("en", "ko")), make_task("b"), make_task("c", None)]
    ctx = ScoringContext(small_executor, GoldCache(None, small_executor))
    only = {("a", "ko"): pred("a", language="ko", sql=COUNT)}
    records = list(scored_records(tasks, only, ctx))
    assert [(r["task_id"], r["language"], r["outcome"]) for r in records] == [
        ("a", "en", "missing"),
        ("a", "ko", "correct"),
        ("b", "en", "missing"),
        ("c", "en", "missing"),
    ]


def test_jobs_give_the_same_outcomes(small_executor):
    tasks = [
        make_task(f"t{i}", f"SELECT count(*) + {i} AS n FROM cdm.person", expect=[(1130 + i,)])
        for i in range(10)
    ]
    preds = {(f"t{i}", "en"): pred(f"t{i}", sql=f"SELECT {1130 + i}") for i in range(10)}
    ctx = ScoringContext(small_executor, GoldCache(None, small_executor))
    one = sorted((r["task_id"], r["outcome"]) for r in scored_records(tasks, preds, ctx))
    four = sorted((r["task_id"], r["outcome"]) for r in scored_records(tasks, preds, ctx, jobs=4))
    assert one == four and {o for _, o in one} == {"correct"}


def test_the_pipeline_and_parallel_jobs_give_the_same_records(small_executor):
    """With one job an answer is parsed in one query process and run in another; with
    more, each answer is handled whole in one: every outcome class, reason and recorded
    SQL comes out the same."""
    tasks = [make_task(name) for name, _, _ in CASES]
    preds = {(name, "en"): pred(name, **dict(fields)) for name, fields, _ in CASES}
    ctx = ScoringContext(small_executor, GoldCache(None, small_executor))

    def seen(records):
        keep = ("task_id", "outcome", "reason", "sql", "executed_sql", "lf_match")
        return sorted(tuple(r[k] for k in keep) for r in records)

    one = seen(scored_records(tasks, preds, ctx))
    two = seen(scored_records(tasks, preds, ctx, jobs=2))
    assert one == two
    assert [o for _, o, *_ in one] == [o for _, _, o in sorted(CASES)]


def test_the_pipeline_s_parsing_process_never_runs_a_query(omop_db, tmp_path):
    """The process that parses answers never runs one: after a query that takes
    hundreds of MB, the parser stays small, and the run's memory bound counts the
    parser as small rather than as another of the largest (the query lane has the run
    lane's process and the golds' own)."""
    big = "SELECT length(repeat('x', 400000000)) AS n"
    tasks = [make_task(f"t{i}") for i in range(6)]
    answers = [COUNT, big, "SELECT 1130", big, COUNT, None]
    preds = {(f"t{i}", "en"): pred(f"t{i}", sql=sql) for i, sql in enumerate(answers) if sql}
    (tmp_path / "t5.csv").write_text("persons\n1130\n")
    preds[("t5", "en")] = Prediction("t5", csv="t5.csv", csv_folder=str(tmp_path), kind="csv")
    with Executor(omop_db) as ex:
        ctx = ScoringContext(ex, GoldCache(None, ex))
        outcomes = [r["outcome"] for r in scored_records(tasks, preds, ctx)]
        lanes = ex.workers_peak_rss_by_lane()
        alive = {n: h.most_alive for n, h in ex._pool._lanes.items()}
        assert alive["parse"] == 1 and alive["query"] <= 2
        assert ex.workers_peak_rss_kib() == sum(lanes.values())
    assert outcomes == ["correct", "mismatch", "correct", "mismatch", "correct", "correct"]
    assert lanes["query"] > 400_000  # KiB: it held the 400 MB string
    assert lanes["parse"] < lanes["query"] - 300_000


def test_a_run_gets_what_its_parse_left_of_the_time_limit(omop_db):
    """The pipeline's run of an answer is given the rest of the answer's time limit, not
    a whole one: a query that would run for minutes stops at what was left."""
    from score.scoring.answer import RunAnswer

    with Executor(omop_db, settings=ExecutorSettings(timeout_seconds=60.0)) as ex:
        cross = "SELECT count(*) FROM cdm.measurement a CROSS JOIN cdm.measurement b"
        stopped = ex.call(RunAnswer(cross, 0.2))
        assert isinstance(stopped, QueryError) and stopped.kind == "timeout"
        assert ex.workers_replaced == 0  # interrupted in time, not killed
        assert ex.call(RunAnswer(COUNT, 0.2)).rows() == [(1130,)]


def test_an_answer_whose_parse_used_up_its_time_limit_is_a_timeout(small_executor):
    from concurrent.futures import Future

    from score.inputs.task_set import instances
    from score.scoring.answer import AnswerReply
    from score.scoring.instance_result import InstanceResult
    from score.scoring.phases import Pending
    from score.scoring.run_lane import RunLane

    ctx = ScoringContext(small_executor, GoldCache(None, small_executor))
    task = make_task("t")
    (instance,) = instances([task])
    prediction = pred("t", sql=COUNT)
    pending = Pending(InstanceResult.start(instance, "run", prediction), task, prediction)
    pending.prepared = AnswerReply("sql", "", COUNT, COUNT, True, seconds_left=0.0)
    done: Future = Future()
    done.set_result(pending)
    with RunLane(ctx) as lane:
        record = lane.submit(done).result().result.to_record()
    assert record["outcome"] == Outcome.EXECUTE_ERROR and "time limit" in record["reason"]
    assert record["executed_sql"] == COUNT  # what would have run is still recorded


def test_gold_cache_serves_a_second_run_without_gold_queries(omop_db, tmp_path):
    tasks = [
        make_task(f"t{i}", f"SELECT count(*) + {i} AS n FROM cdm.person", expect=[(1130 + i,)])
        for i in range(5)
    ]
    preds = {(f"t{i}", "en"): pred(f"t{i}", sql=f"SELECT {1130 + i}") for i in range(5)}
    with Executor(omop_db) as ex:
        first = GoldCache(tmp_path / "cache", ex)
        list(scored_records(tasks, preds, ScoringContext(ex, first)))
        assert first.executions == 5
    with Executor(omop_db) as ex:  # a new process would see the same files
        second = GoldCache(tmp_path / "cache", ex)
        outcomes = [r["outcome"] for r in scored_records(tasks, preds, ScoringContext(ex, second))]
        assert second.executions == 0 and outcomes == ["correct"] * 5
    with Executor(omop_db, settings=ExecutorSettings(max_rows=50)) as ex:
        other = GoldCache(tmp_path / "cache", ex)  # other settings, other keys
        list(scored_records(tasks, preds, ScoringContext(ex, other)))
        assert other.executions == 5


def test_csv_index_predictions_are_scored(omop_db, tmp_path):
    tasks_path = write_task_file(
        tmp_path / "tasks.jsonl", [make_task("a"), make_task("b"), make_task("c")]
    )
    (tmp_path / "a.csv").write_text("persons\n1130\n")
    (tmp_path / "b.csv").write_text("persons\n7\n")
    index = write_jsonl(
        tmp_path / "index.jsonl",
        [
            {"task_id": "a", "csv": "a.csv"},
            {"task_id": "b", "csv": "b.csv"},
            {"task_id": "c", "csv": None},
        ],
    )
    with Executor(omop_db) as ex:
        run_scoring(
            tasks_path,
            index,
            tmp_path / "run",
            ex,
            ScoringOptions(cache_dir=None, with_priors=False),
        )
    outcomes = [r["outcome"] for r in read_run(tmp_path / "run")["records"]]
    assert outcomes == ["correct", "mismatch", "execute_error"]


# -- the project's own benchmark ------------------------------------------------------


@pytest.fixture(scope="module")
def reference_predictions(tmp_path_factory) -> Path:
    tasks = load_tasks(PROJECT_TASKS)
    lines = []
    for t in tasks:
        for lang in sorted(t["questions"]):
            out = f"```sql\n{t['answer_sql']}\n```" if t["answerable"] else "ABSTAIN"
            lines.append({"task_id": t["id"], "language": lang, "run": "reference", "output": out})
    return write_jsonl(tmp_path_factory.mktemp("preds") / "reference.jsonl", lines)


@pytest.fixture(scope="module")
def reference_run(omop_db, reference_predictions, tmp_path_factory):
    out = tmp_path_factory.mktemp("runs") / "reference"
    cache = out.parent / "cache"
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            PROJECT_TASKS, reference_predictions, out, ex, ScoringOptions(cache_dir=cache)
        )
    return out, cache, outcome


def test_reference_answers_score_ex_one_and_priors_score_zero(reference_run):
    out, _, outcome = reference_run
    summary = outcome.summary
    assert summary["ex"] == 1.0
    assert summary["rs"]["0"] == 100.0
    assert summary["outcomes"]["counts"]["correct"] == summary["n_answerable"]
    priors = json.loads((out / "priors.json").read_text())
    assert priors["prior/select-0"]["ex"] == 0.0
    assert priors["prior/abstain-all"]["ex"] == 0.0
    assert priors["prior/select-0"]["rs"]["0"] == 0.0


def test_select_zero_for_every_task_scores_zero(omop_db, tmp_path, reference_run):
    _, cache, _ = reference_run
    tasks = load_tasks(PROJECT_TASKS)
    preds = write_jsonl(
        tmp_path / "zero.jsonl",
        [
            {"task_id": t["id"], "language": lang, "sql": "SELECT 0"}
            for t in tasks
            for lang in t["questions"]
        ],
    )
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            PROJECT_TASKS,
            preds,
            tmp_path / "run",
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False),
        )
    assert outcome.summary["ex"] == 0.0
    assert outcome.gold_executions == 0  # every gold came from the first run's cache


def test_results_files_are_complete_and_sorted(reference_run):
    out, _, outcome = reference_run
    run = read_run(out)
    keys = [(r["task_id"], r["language"]) for r in run["records"]]
    assert keys == sorted(keys) and len(keys) == outcome.summary["n_instances"] == 451
    results = json.loads((out / "results.json").read_text())
    assert len(results["instances"]) == 451 and results["summary"]["ex"] == 1.0


def test_scoring_resumes_after_a_kill(omop_db, reference_predictions, reference_run, tmp_path):
    _, cache, full = reference_run
    out = tmp_path / "killed"
    args = [
        sys.executable,
        "-m",
        "curate.cli",
        "score",
        "run",
        str(PROJECT_TASKS),
        str(reference_predictions),
        "--out",
        str(out),
        "--db",
        str(omop_db),
        "--no-cache",
        "--split",
        "all",
        "-q",
    ]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if results.exists() and results.read_bytes().count(b"\n") >= 40:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / "summary.json").exists(), "the run finished before it could be killed"
    done_before = results.read_bytes().count(b"\n")
    assert 40 <= done_before < 451
    # a torn half line, as a kill in the middle of a write would leave
    with results.open("ab") as f:
        f.write(b'{"task_id": "omop-')
    result = CliRunner().invoke(main, [*args[3:], "--resume"])
    assert result.exit_code == 0, result.output
    resumed = read_run(out)
    assert len(resumed["records"]) == 451
    assert resumed["summary"]["ex"] == full.summary["ex"] == 1.0


def test_resume_refuses_another_run_and_a_plain_rerun_refuses_to_overwrite(
    omop_db, reference_predictions, reference_run, tmp_path
):
    out, cache, _ = reference_run
    base = [
        "score",
        "run",
        str(PROJECT_TASKS),
        str(reference_predictions),
        "--db",
        str(omop_db),
        "-q",
    ]
    again = CliRunner().invoke(main, [*base, "--out", str(out)])
    assert again.exit_code == 1 and "--resume" in again.output
    other = CliRunner().invoke(
        main, [*base, "--out", str(out), "--resume", "--profile", "spider-ts"]
    )
    assert other.exit_code == 1 and "profile" in other.output


def test_score_command_reports_bad_lines_by_number(omop_db, tmp_path):
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", [make_task("a"), make_task("b")])
    preds = tmp_path / "p.jsonl"
    preds.write_text(
        '{"task_id": "a", "sql": "SELECT 1130"}\nnot json\n{"task_id": "zzz", "sql": "SELECT 1"}\n'
    )
    base = ["score", "run", str(tasks_path), str(preds), "--db", str(omop_db), "--no-cache", "-q"]
    base += ["--split", "all"]
    strict = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "r1")])
    assert strict.exit_code == 1
    assert "line 2" in strict.output and "line 3" in strict.output
    lenient = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "r2"), "--lenient"])
    assert lenient.exit_code == 0, lenient.output
    summary = json.loads((tmp_path / "r2" / "summary.json").read_text())
    assert len(summary["input_problems"]) == 2
    assert summary["outcomes"]["counts"]["missing"] == 1


def test_report_and_compare_commands(reference_run, omop_db, tmp_path):
    out, cache, _ = reference_run
    tasks = load_tasks(PROJECT_TASKS)
    worse = []
    for i, t in enumerate(tasks):
        for lang in sorted(t["questions"]):
            good = f"```sql\n{t['answer_sql']}\n```" if t["answerable"] else "ABSTAIN"
            worse.append(
                {
                    "task_id": t["id"],
                    "language": lang,
                    "run": "perturbed",
                    "output": "SELECT 0" if i % 3 == 0 else good,
                }
            )
    preds = write_jsonl(tmp_path / "perturbed.jsonl", worse)
    run_b = tmp_path / "perturbed"
    with Executor(omop_db) as ex:
        run_scoring(PROJECT_TASKS, preds, run_b, ex, ScoringOptions(cache_dir=cache))
    compared = CliRunner().invoke(
        main, ["score", "compare", str(out), str(run_b), "--out", str(tmp_path / "cmp")]
    )
    assert compared.exit_code == 0, compared.output
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert comparison["b"] > 0 and comparison["c"] == 0 and comparison["p_value"] < 0.001
    assert (tmp_path / "cmp" / "chart.svg").read_text().startswith("<svg")
    report = (tmp_path / "cmp" / "report.md").read_text()
    assert "McNemar" in report and "prior/select-0" in report
    reported = CliRunner().invoke(
        main, ["score", "report", str(out), str(run_b), "--out", str(tmp_path / "rep")]
    )
    assert reported.exit_code == 0 and (tmp_path / "rep" / "report.md").exists()


def test_a_release_folder_is_scored_and_a_drifted_task_file_refused(
    omop_db, reference_predictions, reference_run, tmp_path
):
    from curate.publish.release import publish
    from score.cdm.duckdb_file import describe_database

    info = describe_database(omop_db)
    columns = [
        {"table": t.name, "column": c, "type": ty, "rows": t.rows}
        for t in info.tables
        for c, ty in t.columns
    ]
    release = publish(
        PROJECT_TASKS,
        "0.1.0",
        tmp_path / "releases",
        database_columns=columns,
        database_fingerprint=info.fingerprint,
    ).path
    _, cache, _ = reference_run
    with Executor(omop_db) as ex:
        outcome = run_scoring(
            release,
            reference_predictions,
            tmp_path / "run",
            ex,
            ScoringOptions(cache_dir=cache, with_priors=False),
        )
    assert outcome.summary["ex"] == 1.0 and outcome.summary["n_instances"] == 451
    drifted = tmp_path / "drifted.jsonl"
    lines = PROJECT_TASKS.read_text().splitlines()
    first = json.loads(lines[1])
    first["gold_sql"] = first["gold_sql"] + " "
    drifted.write_text("\n".join([lines[0], json.dumps(first), *lines[2:]]) + "\n")
    result = CliRunner().invoke(
        main,
        [
            "score",
            "run",
            str(drifted),
            str(reference_predictions),
            "--out",
            str(tmp_path / "r2"),
            "--db",
            str(omop_db),
            "--manifest",
            str(release),
            "-q",
        ],
    )
    assert result.exit_code == 1
    assert f"changed {first['id']}" in result.output and "release 0.1.0" in result.output


def test_run_files_validate_against_their_schemas(reference_run):
    from score.inputs.schemas import validation_errors

    out, _, _ = reference_run
    summary = json.loads((out / "summary.json").read_text())
    assert validation_errors("summary", summary) == []
    results = json.loads((out / "results.json").read_text())
    assert validation_errors("results", results) == []
    for prior in json.loads((out / "priors.json").read_text()).values():
        assert validation_errors("summary", prior) == []


def test_a_failure_of_the_run_lane_itself_is_raised_not_waited_on(small_executor, monkeypatch):
    """Every instance's own failure is an outcome; a bug in the lane's own code must
    reach the caller instead of leaving it waiting for a result that never comes."""
    from score.scoring.run_lane import RunLane

    def broken(self, *args):
        raise RuntimeError("a bug in the run lane")

    monkeypatch.setattr(RunLane, "_take", broken)
    tasks = [make_task(f"t{i}") for i in range(3)]
    preds = {(f"t{i}", "en"): pred(f"t{i}", sql=COUNT) for i in range(3)}
    ctx = ScoringContext(small_executor, GoldCache(None, small_executor))
    with pytest.raises(RuntimeError, match="a bug in the run lane"):
        list(scored_records(tasks, preds, ctx))


def test_a_gold_result_already_on_disk_is_not_written_again(omop_db, tmp_path):
    sql = "SELECT count(*) AS n FROM cdm.person"
    with Executor(omop_db) as ex:
        cache = GoldCache(tmp_path / "cache", ex)
        result = ex.execute(sql)
        cache.put(sql, result)
        (path,) = (tmp_path / "cache").rglob("*.arrow")
        inode = path.stat().st_ino
        GoldCache(tmp_path / "cache", ex).put(sql, result)  # a recuration: the same bytes
        assert path.stat().st_ino == inode  # not replaced: no rename over the file
        other = ex.execute("SELECT count(*) + 1 AS n FROM cdm.person")
        GoldCache(tmp_path / "cache", ex).put(sql, other)  # another result: replaced whole
        assert path.stat().st_ino != inode
        assert GoldCache(tmp_path / "cache", ex).result(sql).table.to_pylist() == [{"n": 1131}]
        assert not [p for p in (tmp_path / "cache").rglob("*") if p.name.endswith(".tmp")]
