"""Scores pinned to what they were verified on: the day, the gold result, the split.

Every test here drives a real scoring run on the embedded database (and on a copy with
49 persons deleted after it was built); none of them passed before tasks carried their
today and gold result hash.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from curate.cli import main
from curate.write.curation import curate_to_files
from score.cli.exit_codes import FOUND_DIFFERENT
from score.execution.executor import Executor, ExecutorSettings
from score.inputs.predictions import Prediction
from score.inputs.split import held_out_ids
from score.inputs.task_set import load_tasks
from score.scoring.gold_cache import GoldCache
from score.scoring.outcomes import Outcome
from score.scoring.pipeline import ScoringContext
from score.scoring.run import ScoringOptions, run_scoring
from score.scoring.run_folder import read_run
from tests.conftest import DELETED_PERSONS
from tests.paths import REPO
from tests.task_factory import make_task, scored_records, write_task_file

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def reference_lines(tasks) -> list[dict]:
    """Each instance answered with its task's independent reference answer (or ABSTAIN)."""
    return [
        {
            "task_id": t["id"],
            "language": lang,
            "output": f"```sql\n{t['answer_sql']}\n```" if t["answerable"] else "ABSTAIN",
        }
        for t in tasks
        for lang in sorted(t["questions"])
    ]


# -- the gold result hash: a changed database is visible per task -----------------------


def _comparable(rows: list[tuple], ordered: bool) -> list[tuple]:
    """Rows with floats rounded to 10 significant digits (a parallel sum may differ in
    its last bits), sorted unless their order matters."""

    def cell(v):
        return float(f"{v:.10g}") if isinstance(v, float) else v

    rows = [tuple(cell(v) for v in row) for row in rows]
    return rows if ordered else sorted(rows, key=repr)


def gold_results_changed(tasks, before: Path, after: Path) -> set[str]:
    """The tasks whose gold returns something else on ``after`` than on ``before``, found
    by running every gold with plain DuckDB on both files (no sqlgold code involved)."""
    changed = set()
    cons = [duckdb.connect(str(p), read_only=True) for p in (before, after)]
    try:
        for t in tasks:
            if not t["answerable"]:
                continue
            old, new = (
                _comparable(con.execute(t["gold_sql"]).fetchall(), t["order_matters"])
                for con in cons
            )
            if old != new:
                changed.add(t["id"])
    finally:
        for con in cons:
            con.close()
    return changed


@pytest.fixture(scope="module")
def drift_runs(omop_db, changed_db, tmp_path_factory):
    """The project's reference answers scored on the embedded database (warming a gold
    cache), then on the changed copy with that warm cache, through the command line."""
    tasks = load_tasks(PROJECT_TASKS)
    folder = tmp_path_factory.mktemp("drift")
    preds = write_jsonl(folder / "reference.jsonl", reference_lines(tasks))
    cache = folder / "cache"
    results = {}
    for name, db in (("original", omop_db), ("changed", changed_db)):
        results[name] = CliRunner().invoke(
            main,
            [
                "score", "run", str(PROJECT_TASKS), str(preds), "--out", str(folder / name),
                "--db", str(db), "--cache", str(cache), "--split", "all", "-q",
            ],
        )  # fmt: skip
    return tasks, folder, results


def test_a_changed_database_shows_gold_drift_on_exactly_the_changed_tasks(
    omop_db, changed_db, drift_runs
):
    tasks, folder, results = drift_runs
    assert results["original"].exit_code == 0, results["original"].output
    original = read_run(folder / "original")
    assert original["summary"]["ex"] == 1.0 and original["summary"]["n_gold_drift"] == 0

    expected = gold_results_changed(tasks, omop_db, changed_db)
    assert expected, f"deleting {DELETED_PERSONS} persons changes some gold results"
    run = read_run(folder / "changed")
    drifted = {r["task_id"] for r in run["records"] if r["outcome"] == Outcome.GOLD_DRIFT}
    assert drifted == expected
    by_id = {t["id"]: t for t in tasks}
    for r in run["records"]:
        if r["outcome"] == Outcome.GOLD_DRIFT:  # both hashes in the reason
            assert by_id[r["task_id"]]["gold_result"]["sha256"] in r["reason"]
    summary = run["summary"]
    instances = sum(len(by_id[i]["questions"]) for i in expected)
    assert summary["n_gold_drift"] == summary["outcomes"]["counts"]["gold_drift"] == instances
    assert summary["n"] == summary["n_instances"] - instances  # out of every rate
    assert "gold_drift" not in summary["outcomes"]["rates"]
    # the command says so: exit code 3 and a warning naming the count and the data
    result = results["changed"]
    assert result.exit_code == FOUND_DIFFERENT, result.output
    assert f"(gold_drift {instances})" in result.output
    assert f"{instances} instance(s) are gold_drift" in result.output
    assert "the tasks were verified on data with fingerprint" in result.output


def test_a_warm_gold_cache_of_other_data_is_never_served(omop_db, changed_db, tmp_path):
    """The issue: with the old fingerprint the warm cache served the original's gold
    results, and the gold's own SQL scored mismatch on the changed copy."""
    tasks = [t for t in load_tasks(PROJECT_TASKS) if t["answerable"]]
    own = {(t["id"], "en"): Prediction(t["id"], "en", "own", sql=t["gold_sql"], kind="sql")
           for t in tasks}  # fmt: skip
    cache = tmp_path / "cache"
    with Executor(omop_db) as ex:
        list(scored_records(tasks, own, ScoringContext(ex, GoldCache(cache, ex))))
    with Executor(changed_db) as ex:
        gold = GoldCache(cache, ex)
        records = list(scored_records(tasks, own, ScoringContext(ex, gold)))
    assert gold.executions == len({t["gold_sql"] for t in tasks})  # no stale entry served
    outcomes = {r["outcome"] for r in records if r["language"] == "en"}
    assert outcomes == {Outcome.CORRECT, Outcome.GOLD_DRIFT}, outcomes  # never a mismatch


# -- the fixed today travels from curation to scoring ------------------------------------

DAY_SOURCE = {
    "format": "sqlgold.source/1",
    "id": "visits-last-year",
    "question": "How many visits started in the year up to today?",
    "gold_sql": "SELECT COUNT(*) AS n FROM cdm.visit_occurrence "
    "WHERE visit_start_date > DATEADD(year, -1, GETDATE()) AND visit_start_date <= GETDATE()",
    "gold_dialect": "tsql",
    "answer_sql": "SELECT count(*) AS n FROM cdm.visit_occurrence "
    "WHERE visit_start_date > current_date - INTERVAL 1 YEAR AND visit_start_date <= current_date",
    "answer_dialect": "duckdb",
}


@pytest.fixture(scope="module")
def day_tasks(omop_db, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("today")
    source = write_jsonl(folder / "day_source.jsonl", [DAY_SOURCE])
    settings = ExecutorSettings(today=__import__("datetime").date(2019, 6, 30))
    with Executor(omop_db, settings=settings) as ex:
        run = curate_to_files(source, "jsonl", ex, out=folder / "day_tasks.jsonl")
    assert run.report["counts"]["kept"] == 1, run.report["records"]
    return run.tasks_path


def test_each_task_records_the_day_it_was_verified_under(day_tasks):
    (task,) = load_tasks(day_tasks)
    assert task["today"] == "2019-06-30"
    assert task["gold_result"]["rows"] == 1 and len(task["gold_result"]["sha256"]) == 64


def test_scoring_runs_each_task_under_its_own_today(omop_db, day_tasks, tmp_path):
    """The issue: scoring without --today compared against another day's result, so a
    right answer scored mismatch."""
    preds = write_jsonl(tmp_path / "p.jsonl", reference_lines(load_tasks(day_tasks)))
    with Executor(omop_db) as ex:  # no --today
        outcome = run_scoring(
            day_tasks, preds, tmp_path / "run", ex, ScoringOptions(cache_dir=None)
        )
    (record,) = read_run(tmp_path / "run")["records"]
    assert record["outcome"] == Outcome.CORRECT, record["reason"]
    assert "2019-06-30" in record["executed_sql"]
    assert outcome.summary["ex"] == 1.0


def test_a_conflicting_today_is_refused(omop_db, day_tasks, tmp_path):
    preds = write_jsonl(tmp_path / "p.jsonl", reference_lines(load_tasks(day_tasks)))
    args = ["score", "run", str(day_tasks), str(preds), "--out", str(tmp_path / "r")]
    args += ["--db", str(omop_db), "--no-cache", "--split", "all", "-q"]
    refused = CliRunner().invoke(main, [*args, "--today", "2026-01-01"])
    assert refused.exit_code == 1
    assert "--today 2026-01-01 conflicts with the day tasks were verified under" in refused.output
    assert "2019-06-30: 1 task(s), e.g. visits-last-year" in refused.output
    assert not (tmp_path / "r").exists()  # checked to be writable, nothing made
    same = CliRunner().invoke(main, [*args, "--today", "2019-06-30"])
    assert same.exit_code == 0, same.output


# -- a cut-off answer is cut_off, whatever its partial SQL does ---------------------------


@pytest.mark.parametrize(
    "partial",
    [
        "SELECT count(*) AS n FROM cdm.person WHERE",  # does not parse
        "SELECT count(*) AS n FROM cdm.person WHERE year_of_bi",  # an unknown column
    ],
)
def test_a_cut_off_output_with_partial_sql_is_cut_off(executor, partial):
    task = make_task("t")
    output = f"Let me count them.\n```sql\n{partial}"
    prediction = Prediction("t", "en", "run", output=output, status="cut_off")
    ctx = ScoringContext(executor, GoldCache(None, executor))
    (record,) = scored_records([task], {prediction.key: prediction}, ctx)
    assert record["outcome"] == Outcome.CUT_OFF
    assert "the output hit its limit inside the query" in record["reason"]
    # the same text without the generator's word is an ordinary failure
    plain = Prediction("t", "en", "run", output=output)
    (record,) = scored_records([task], {plain.key: plain}, ctx)
    assert record["outcome"] in (Outcome.PARSE_ERROR, Outcome.RENDER_ERROR)


# -- the split: train tasks are not evaluated by default ----------------------------------


def test_score_run_scores_the_test_split_by_default_and_says_so(omop_db, tmp_path):
    tasks = [make_task(f"q{i}") for i in range(8)]
    task_file = write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = write_jsonl(
        tmp_path / "p.jsonl",
        [{"task_id": t["id"], "sql": "SELECT count(*) FROM cdm.person"} for t in tasks],
    )
    base = ["score", "run", str(task_file), str(preds), "--db", str(omop_db), "--no-cache", "-q"]
    result = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "test")])
    assert result.exit_code == 0, result.output
    test_ids = held_out_ids(tasks, 0.5, 0)  # the split grounding and publish use
    run = read_run(tmp_path / "test")
    assert {r["task_id"] for r in run["records"]} == test_ids
    summary = run["summary"]
    assert summary["split"]["name"] == "test" and summary["split"]["tasks"] == len(test_ids)
    assert summary["split"]["predictions_outside"] == len(tasks) - len(test_ids)
    assert "split        test (4 of 8 tasks; computed (test fraction 0.5, seed 0))" in result.output
    train = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "train"), "--split", "train"])
    assert train.exit_code == 0, train.output
    trained = {r["task_id"] for r in read_run(tmp_path / "train")["records"]}
    assert trained == {t["id"] for t in tasks} - test_ids
    every = CliRunner().invoke(main, [*base, "--out", str(tmp_path / "all"), "--split", "all"])
    assert len(read_run(tmp_path / "all")["records"]) == 8, every.output


def test_an_empty_predictions_file_is_an_error_not_451_missing(omop_db, tmp_path):
    task_file = write_task_file(tmp_path / "tasks.jsonl", [make_task("a"), make_task("b")])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    args = ["score", "run", str(task_file), str(empty), "--out", str(tmp_path / "r")]
    result = CliRunner().invoke(main, [*args, "--db", str(omop_db), "--no-cache", "-q"])
    assert result.exit_code == 1
    assert result.output == f"error: [predictions] {empty}: the file holds no predictions\n"


def test_a_run_where_most_instances_are_missing_warns(omop_db, tmp_path):
    tasks = [make_task(f"q{i}") for i in range(4)]
    task_file = write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = write_jsonl(tmp_path / "p.jsonl", [{"task_id": "q0", "sql": "SELECT 1130"}])
    args = ["score", "run", str(task_file), str(preds), "--out", str(tmp_path / "r"), "-q"]
    args += ["--db", str(omop_db), "--no-cache", "--split", "all"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "warning: 3 of 4 instances have no prediction (missing)" in result.output
