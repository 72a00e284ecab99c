"""Scoring with a test suite (``score run --suite``) on a small real suite of three
variants of the test database (:mod:`tests.score.suite.made_suite`): TS beside EX, the
variant that told a near miss apart, cached gold results on the variants, refusals of a
suite built for something else, and --resume."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.errors import SqlgoldError
from score.execution.executor import Executor
from score.scoring import run as run_module
from score.scoring.run import ScoringOptions, run_scoring
from score.scoring.run_folder import read_run
from score.suite.suite_file import MANIFEST, SuiteError, read_suite, variant_database
from tests.task_factory import write_task_file

#: (task id, language) -> the prediction's SQL.
PREDICTIONS = {
    ("s-count", "en"): "SELECT 1130 AS n",  # right on the base database only
    ("s-count", "ko"): "SELECT COUNT(person_id) AS n FROM cdm.person",  # right everywhere
    ("s-gender", "en"): "SELECT count(*) AS n FROM cdm.person",  # gender filter dropped
    ("s-dropped", "en"): "SELECT 1130 AS n",  # the suite drops the task: base only
    ("s-none", "en"): None,  # unanswerable: abstains
}


def write_predictions(path: Path, predictions=PREDICTIONS) -> Path:
    lines = [{"task_id": t, "language": lang, "sql": sql} for (t, lang), sql in predictions.items()]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def tasks_of(suite) -> Path:
    return suite.folder.parent / "tasks.jsonl"


def score(omop_db, suite_folder, tasks, out, cache, preds=None, **options):
    """Score ``preds`` (by default :data:`PREDICTIONS`) with the suite at ``suite_folder``."""
    preds = preds or write_predictions(out.parent / f"{out.name}.preds.jsonl")
    with Executor(omop_db) as ex:
        return run_scoring(
            tasks,
            preds,
            out,
            ex,
            ScoringOptions(split="all", cache_dir=cache, suite=suite_folder, **options),
        )


@pytest.fixture(scope="module")
def suite_run(omop_db, made_suite, tmp_path_factory):
    out = tmp_path_factory.mktemp("suite-runs") / "run"
    cache = out.parent / "cache"
    outcome = score(omop_db, made_suite.folder, tasks_of(made_suite), out, cache)
    return out, cache, outcome


def by_key(out: Path) -> dict:
    return {(r["task_id"], r["language"]): r for r in read_run(out)["records"]}


def test_the_made_suite_reads_and_its_variants_hold_what_they_say(made_suite, tmp_path):
    suite = read_suite(made_suite.folder)
    assert [v.name for v in suite.variants] == ["v1-even", "v2-thirds", "v3-genders"]
    assert suite.variants[0].rows["person"] == 565
    with Executor(variant_database(suite, suite.variants[2], tmp_path)) as ex:
        assert ex.fingerprint == suite.variants[2].fingerprint
        zero = ex.execute("SELECT count(*) FROM cdm.person WHERE gender_concept_id = 0")
        assert zero.rows() == [(113,)]


def test_an_instance_is_correct_only_if_it_matches_on_every_variant(suite_run):
    out, _, outcome = suite_run
    records = by_key(out)
    constant = records[("s-count", "en")]
    assert constant["base_correct"] is True and constant["outcome"] == "mismatch"
    assert constant["suite"]["correct"] is False
    assert constant["suite"]["told_apart_by"] == "v1-even"
    assert "told apart by suite variant v1-even" in constant["reason"]
    same = records[("s-count", "ko")]
    assert same["outcome"] == "correct" and same["suite"]["variants_matched"] == 3
    dropped_filter = records[("s-gender", "en")]
    assert dropped_filter["base_correct"] and dropped_filter["outcome"] == "mismatch"
    assert dropped_filter["suite"]["told_apart_by"] == "v3-genders"
    assert dropped_filter["suite"]["variants_matched"] == 2
    dropped = records[("s-dropped", "en")]
    assert dropped["outcome"] == "correct" and dropped["suite"]["dropped"] is True
    assert "judged on the base database only" in dropped["suite"]["reason"]
    assert records[("s-none", "en")]["outcome"] == "abstained"
    assert "unanswerable" in records[("s-none", "en")]["suite"]["reason"]


def test_the_summary_gives_ts_beside_ex_and_the_instances_only_the_suite_caught(suite_run):
    out, _, outcome = suite_run
    s = outcome.summary
    assert s["ex"] == 1.0 and s["ts"] == 0.5
    assert len(s["ex_ci"]) == 2 and len(s["ts_ci"]) == 2
    assert s["by_tier"]["simple"]["ts"] == 0.5
    caught = {(c["task_id"], c["language"]): c["variant"] for c in s["suite"]["caught"]}
    assert caught == {("s-count", "en"): "v1-even", ("s-gender", "en"): "v3-genders"}
    assert s["suite"]["dropped_scored"] == ["s-dropped"]
    meta = json.loads((out / "run.json").read_text())
    assert meta["suite"]["variants"] == 3
    assert len(meta["suite"]["manifest_sha256"]) == 64
    priors = json.loads((out / "priors.json").read_text())
    assert priors["prior/select-0"]["ts"] == 0.0


def test_gold_results_on_the_variants_come_from_the_cache_the_second_time(
    omop_db, made_suite, suite_run, tmp_path
):
    _, cache, first = suite_run
    assert first.gold_executions > 0
    again = score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "again", cache)
    assert again.gold_executions == 0
    assert again.summary["ts"] == first.summary["ts"]


def test_a_suite_for_other_tasks_or_another_database_is_refused_before_any_output(
    omop_db, changed_db, made_suite, tmp_path
):
    from tests.task_factory import make_task, write_task_file

    other = write_task_file(tmp_path / "other.jsonl", [make_task("s-count")])
    preds = write_predictions(tmp_path / "p.jsonl", {("s-count", "en"): "SELECT 1"})
    runner = CliRunner()
    cases = [
        (other, omop_db, "built for another task set"),
        (tasks_of(made_suite), changed_db, "built on another base database"),
    ]
    for tasks, db, said in cases:
        out = tmp_path / f"out-{db.parent.name}-{tasks.stem}"
        args = ["score", "run", str(tasks), str(preds), "--out", str(out), "--split", "all"]
        args += ["--db", str(db), "--suite", str(made_suite.folder), "-q", "--no-cache"]
        result = runner.invoke(main, args)
        assert result.exit_code == 1, result.output
        lines = [line for line in result.stderr.splitlines() if line.strip()]
        assert len(lines) == 1 and said in lines[0] and "[suite]" in lines[0], lines
        assert MANIFEST in lines[0]
        assert not out.exists()


def test_a_variant_whose_database_is_not_the_one_fingerprinted_is_refused(
    omop_db, made_suite, tmp_path
):
    copy = tmp_path / "suite"
    shutil.copytree(made_suite.folder, copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    manifest["variants"][0]["fingerprint"] = "0" * 64
    (copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(SuiteError, match="variant v1-even: its database's fingerprint"):
        score(omop_db, copy, tasks_of(made_suite), tmp_path / "run", tmp_path / "cache")


def test_a_run_stopped_before_the_suite_resumes_to_the_same_records(
    omop_db, made_suite, suite_run, tmp_path, monkeypatch
):
    out, cache, _ = suite_run

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(run_module, "judge_with_suite", stopped)
    with pytest.raises(KeyboardInterrupt):
        score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "run", cache)
    half = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert len(half) == 5 and all(r["suite"] is None for r in half)
    monkeypatch.undo()
    with pytest.raises(SqlgoldError, match="--resume"):
        score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "run", cache)
    other = tmp_path / "other-suite"
    shutil.copytree(made_suite.folder, other)
    with pytest.raises(SqlgoldError, match="suite changed"):
        score(omop_db, other, tasks_of(made_suite), tmp_path / "run", cache, resume=True)
    score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "run", cache, resume=True)

    def settled(folder: Path) -> dict:
        return {
            k: {x: r[x] for x in ("outcome", "reason", "base_correct", "suite")}
            for k, r in by_key(folder).items()
        }

    assert settled(tmp_path / "run") == settled(out)


def test_score_run_prints_ts_beside_ex(omop_db, made_suite, tmp_path):
    preds = write_predictions(tmp_path / "p.jsonl")
    out = tmp_path / "run"
    args = ["score", "run", str(tasks_of(made_suite)), str(preds), "--out", str(out)]
    args += ["--split", "all", "--db", str(omop_db), "--suite", str(made_suite.folder), "-q"]
    args += ["--cache", str(tmp_path / "cache")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "EX           1.000" in result.stdout
    assert "TS           0.500" in result.stdout
    assert "2 right on the base database told apart" in result.stdout


def test_a_suite_run_s_files_validate_against_their_schemas(suite_run):
    from score.inputs.schemas import validation_errors

    out, _, _ = suite_run
    summary = json.loads((out / "summary.json").read_text())
    assert validation_errors("summary", summary) == []
    results = json.loads((out / "results.json").read_text())
    assert validation_errors("results", results) == []
    broken = {**results, "instances": [{**results["instances"][0], "suite": {"correct": 1}}]}
    assert validation_errors("results", broken) != []
    for prior in json.loads((out / "priors.json").read_text()).values():
        assert validation_errors("summary", prior) == []


def test_the_report_and_the_page_show_ts_beside_ex_and_what_only_the_suite_caught(
    suite_run, tmp_path
):
    out, _, _ = suite_run
    result = CliRunner().invoke(main, ["score", "report", str(out), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report.md").read_text()
    assert "| EX | 1.000 [" in report and "| TS | 0.500 [" in report
    assert "## Test suite" in report and "- Test suite: " in report
    assert "| s-count | en | v1-even |" in report and "| s-gender | en | v3-genders |" in report
    assert "(on the base database only if it names none): s-dropped" in report
    assert "| tier | run | instances | EX | TS |" in report
    page = (tmp_path / "report.html").read_text()
    assert "TS" in page and "told apart by variant v1-even" in page


def test_a_postgresql_base_is_scored_there_and_the_suite_with_duckdb(
    pg_cdm, made_suite, suite_run, tmp_path
):
    """The fingerprint is the data's whatever the engine, so the suite built on the
    DuckDB file serves the same data in PostgreSQL: the base runs on the server, the
    variants locally (the predictions, PostgreSQL SQL, translated to DuckDB)."""
    out = tmp_path / "run"
    preds = write_predictions(tmp_path / "p.jsonl")
    with Executor(pg_cdm.reader_url) as ex:
        outcome = run_scoring(
            tasks_of(made_suite),
            preds,
            out,
            ex,
            ScoringOptions(split="all", cache_dir=tmp_path / "cache", suite=made_suite.folder),
        )
    assert outcome.summary["ex"] == 1.0 and outcome.summary["ts"] == 0.5
    told = {k: r["suite"]["told_apart_by"] for k, r in by_key(out).items()}
    assert told == {k: r["suite"]["told_apart_by"] for k, r in by_key(suite_run[0]).items()}


def test_runs_scored_with_and_without_a_suite_compare_but_share_no_report(suite_run, tmp_path):
    """Issue 57, finding 7: comparing a run with a suite and one without is what a user
    wants (EX and the rest; TS only where both have it); one report of both is not."""
    out, _, _ = suite_run
    plain = tmp_path / "plain"
    shutil.copytree(out, plain)
    meta = json.loads((plain / "run.json").read_text())
    del meta["suite"]
    (plain / "run.json").write_text(json.dumps(meta))
    compared = CliRunner().invoke(
        main, ["score", "compare", str(out), str(plain), "--out", str(tmp_path / "c")]
    )
    assert compared.exit_code == 0, compared.output
    result = CliRunner().invoke(
        main, ["score", "report", str(out), str(plain), "--out", str(tmp_path / "r")]
    )
    assert result.exit_code == 1
    assert "test suite" in result.stderr and "none" in result.stderr


def test_a_variant_database_changed_in_the_cache_is_made_again(made_suite, tmp_path):
    import duckdb

    from score.execution.executor import ExecutorSettings
    from score.scoring.suite_phase import open_variant

    variant = made_suite.variants[1]
    path = variant_database(made_suite, variant, tmp_path)
    con = duckdb.connect(str(path))
    con.execute("DELETE FROM cdm.person WHERE person_id % 2 = 0")
    con.close()
    with open_variant(made_suite, variant, ExecutorSettings(), tmp_path) as ex:
        assert ex.fingerprint == variant.fingerprint
        assert ex.execute("SELECT count(*) FROM cdm.person").rows() == [(variant.rows["person"],)]


def test_two_runs_with_the_same_suite_compare_ts_too(suite_run, tmp_path):
    out, _, _ = suite_run
    again = tmp_path / "again"
    shutil.copytree(out, again)
    result = CliRunner().invoke(
        main, ["score", "compare", str(out), str(again), "--out", str(tmp_path / "cmp")]
    )
    assert result.exit_code == 0, result.output
    comparison = json.loads((tmp_path / "cmp" / "comparison.json").read_text())
    assert comparison["scores"]["ts"]["a"] == 0.5 and comparison["scores"]["ts"]["diff"] == 0
    assert comparison["scores"]["ex"]["a"] == 1.0
    assert "| TS | 0.500 | 0.500 |" in (tmp_path / "cmp" / "report.md").read_text()


def test_a_changed_variant_file_is_refused_when_the_suite_is_read(made_suite, tmp_path):
    copy = tmp_path / "suite"
    shutil.copytree(made_suite.folder, copy)
    (copy / "data" / "v2-thirds" / "person.parquet").write_bytes(b"not parquet")
    with pytest.raises(SuiteError, match="v2-thirds/person.parquet: does not match its sha256"):
        read_suite(copy)


@pytest.mark.parametrize(
    ("differ_on", "message"),
    [
        ([], "'differ_on' is not an object"),
        ({"s-count": ["v1-even"]}, "names task s-count, which it does not drop"),
        ({"s-dropped": ["v9"]}, "'differ_on' of task s-dropped is not a list of the suite"),
        ({"s-dropped": []}, "'differ_on' of task s-dropped is not a list of the suite"),
    ],
)
def test_a_manifest_whose_differ_on_is_wrong_is_refused(made_suite, tmp_path, differ_on, message):
    copy = tmp_path / "suite"
    shutil.copytree(made_suite.folder, copy)
    body = json.loads((copy / MANIFEST).read_text(encoding="utf-8"))
    body["differ_on"] = differ_on
    (copy / MANIFEST).write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(SuiteError, match=message):
        read_suite(copy, check_data=False)


def test_without_a_cache_the_variants_databases_last_the_run_only(
    omop_db, made_suite, suite_run, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    outcome = score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "run", None)
    assert outcome.summary["ts"] == suite_run[2].summary["ts"]
    left = [p for p in tmp_path.rglob("*") if p.suffix == ".duckdb" or p.name == "suites"]
    assert left == []  # (the fingerprint cache is the executor's, with or without --no-cache)


def test_parallel_jobs_give_the_same_verdicts(omop_db, made_suite, suite_run, tmp_path):
    out, cache, _ = suite_run
    score(omop_db, made_suite.folder, tasks_of(made_suite), tmp_path / "run", cache, jobs=2)

    def verdicts(folder: Path) -> dict:
        return {k: (r["outcome"], r["suite"]) for k, r in by_key(folder).items()}

    assert verdicts(tmp_path / "run") == verdicts(out)


def test_a_gold_that_fails_on_a_variant_leaves_it_out_and_a_failing_prediction_differs(
    made_suite, tmp_path
):
    from score.execution.executor import ExecutorSettings
    from score.scoring.gold_cache import GoldCache
    from score.scoring.suite_phase import open_variant
    from score.scoring.variant_pass import Check, variant_pass
    from tests.task_factory import make_task

    fails_here = "SELECT CAST(CASE WHEN count(*) = 565 THEN 'x' ELSE '1' END AS INTEGER) AS n"
    checks = [
        Check(make_task("a", fails_here + " FROM cdm.person"), "SELECT 1 AS n"),
        Check(make_task("b"), "SELECT CAST('x' || count(*) AS INTEGER) FROM cdm.person"),
        Check(make_task("c"), "SELECT count(person_id) AS n FROM cdm.person"),
    ]
    variant = made_suite.variants[0]  # v1-even: 565 persons
    with open_variant(made_suite, variant, ExecutorSettings(), tmp_path) as ex:
        for jobs in (1, 2):
            found = variant_pass(checks, ex, GoldCache(None, ex), "sqlgold", None, jobs=jobs)
            assert [f.kind for f in found] == ["gold_failed", "differs", "same"], found
            assert found[1].reason.startswith("the prediction failed: ")


def records_without_times(out: Path) -> list[dict]:
    records = read_run(out)["records"]
    for r in records:
        r.pop("timings", None)
    return records


@pytest.mark.parametrize("lanes", [1, 3])
def test_the_verdicts_are_the_same_however_many_query_processes_share_a_variant(
    omop_db, made_suite, suite_run, tmp_path, monkeypatch, lanes
):
    # one job shares a variant's predictions among as many processes as DuckDB has
    # threads on the base database (two here); one, or three, judge the same
    from score.scoring import suite_phase

    monkeypatch.setattr(suite_phase, "variant_lanes", lambda settings: lanes)
    out = tmp_path / "run"
    score(omop_db, made_suite.folder, tasks_of(made_suite), out, suite_run[1])
    assert records_without_times(out) == records_without_times(suite_run[0])


def test_each_variant_is_opened_while_the_one_before_is_judged_and_every_one_is_closed(
    made_suite, tmp_path
):
    from score.execution.settings import ExecutorSettings
    from score.scoring.suite_phase import open_variant
    from score.scoring.variant_turns import opened_in_turn

    suite = read_suite(made_suite.folder)
    opened = []

    def open_one(variant):
        opened.append(open_variant(suite, variant, ExecutorSettings(), tmp_path))
        return opened[-1]

    turns = opened_in_turn(open_one, suite.variants)
    [(variant, executor)] = next(turns)
    assert variant.name == "v1-even" and executor.fingerprint == suite.variants[0].fingerprint
    assert executor.execute("SELECT count(*) FROM cdm.person").rows() == [(565,)]
    turns.close()  # the caller stops after the first: the one opened ahead is closed too
    assert len(opened) == 2
    for ex in opened:
        with pytest.raises(RuntimeError, match="closed"):
            ex.execute("SELECT 1")
    names = [[v.name for v, _ in group] for group in opened_in_turn(open_one, suite.variants)]
    assert names == [["v1-even"], ["v2-thirds"], ["v3-genders"]]
    for ex in opened[2:]:
        with pytest.raises(RuntimeError, match="closed"):
            ex.execute("SELECT 1")
    # two at a time: the second pair (the last variant alone) opens while the first is used
    del opened[:]
    turns = opened_in_turn(open_one, suite.variants, width=2)
    first = next(turns)
    assert [v.name for v, _ in first] == ["v1-even", "v2-thirds"]
    assert {ex.execute("SELECT count(*) FROM cdm.person").rows()[0] for _, ex in first}
    assert [[v.name for v, _ in group] for group in turns] == [["v3-genders"]]
    assert len(opened) == 3
    for ex in opened:
        with pytest.raises(RuntimeError, match="closed"):
            ex.execute("SELECT 1")


def test_an_answer_reading_only_the_vocabulary_is_run_where_its_gold_reads_clinical_rows(
    omop_db, made_suite, suite_run, tmp_path
):
    # it returns the gold's count on the base database by coincidence; the gold's count
    # changes on a variant and the vocabulary's rows do not: the suite must still see it
    out = tmp_path / "run"
    preds = write_predictions(
        tmp_path / "preds.jsonl",
        {("s-count", "en"): "SELECT 1130 AS n FROM cdm.vocabulary LIMIT 1"},
    )
    score(omop_db, made_suite.folder, tasks_of(made_suite), out, suite_run[1], preds)
    record = by_key(out)[("s-count", "en")]
    assert record["base_correct"] is True and record["outcome"] == "mismatch"
    assert record["suite"]["told_apart_by"] == "v1-even"


def test_an_answer_of_the_vocabulary_alone_is_told_apart_by_a_local_concept(omop_db, tmp_path):
    # gold and answer read the vocabulary only and agree on the base database's (both
    # Gender concepts are in the Gender vocabulary); the suite's local copy of MALE in
    # its own vocabulary tells them apart on every variant, so on the first
    from score.inputs.task_manifest import set_hash
    from tests.score.suite.made_suite import VARIANTS, make_suite
    from tests.task_factory import make_task, write_task_file

    gold = (
        "SELECT count(*) AS n FROM cdm.concept "
        "WHERE domain_id = 'Gender' AND vocabulary_id = 'Gender'"
    )
    tasks = [make_task("s-vocab", gold, languages=("en", "ko"), expect=((2,),))]
    write_task_file(tmp_path / "tasks.jsonl", tasks)
    with Executor(omop_db) as ex:
        [male] = ex.execute("SELECT * FROM cdm.concept WHERE concept_id = 8507").table.to_pylist()
    local = dict(male, concept_id=2_000_000_001, concept_name="MALE (local)", vocabulary_id="Local")
    suite = make_suite(
        omop_db,
        tmp_path / "suite",
        task_set_sha256=set_hash(tasks),
        cache=tmp_path / "databases",
        variants={name: VARIANTS[name] for name in ("v1-even", "v2-thirds")},
        local_concepts=[local],
    )
    preds = write_predictions(
        tmp_path / "preds.jsonl",
        {
            ("s-vocab", "en"): "SELECT count(*) AS n FROM cdm.concept WHERE domain_id = 'Gender'",
            ("s-vocab", "ko"): gold.replace("domain_id = 'Gender' AND ", "")
            + " AND domain_id = 'Gender'",
        },
    )
    out = tmp_path / "run"
    score(omop_db, suite.folder, tmp_path / "tasks.jsonl", out, tmp_path / "cache", preds)
    records = by_key(out)
    dropped = records[("s-vocab", "en")]
    assert dropped["base_correct"] is True and dropped["outcome"] == "mismatch"
    assert dropped["suite"]["told_apart_by"] == "v1-even"
    same = records[("s-vocab", "ko")]
    assert same["outcome"] == "correct" and same["suite"]["variants_matched"] == 1
    assert "vocabulary tables only" in same["suite"]["reason"]


def test_a_dropped_task_is_judged_where_its_gold_and_reference_agree(omop_db, tmp_path):
    # the suite names the variant where the two differ (v2-thirds): the others judge
    from score.inputs.task_manifest import set_hash
    from tests.score.suite.made_suite import SUITE_DROPS, make_suite
    from tests.task_factory import make_task

    tasks = [make_task("s-dropped", languages=("en", "ko"))]
    suite = make_suite(
        omop_db,
        tmp_path / "suite",
        task_set_sha256=set_hash(tasks),
        cache=tmp_path / "databases",
        drops=SUITE_DROPS,
        differ_on={"s-dropped": ["v2-thirds"]},
    )
    write_task_file(tmp_path / "tasks.jsonl", tasks)
    preds = write_predictions(
        tmp_path / "preds.jsonl",
        {
            ("s-dropped", "en"): "SELECT 1130 AS n",  # right on the base database only
            # wrong on v2-thirds alone (every person of it has person_id % 3 = 1)
            ("s-dropped", "ko"): "SELECT CASE WHEN count(*) = (SELECT count(*) FROM "
            "cdm.person WHERE person_id % 3 = 1) THEN 0 ELSE count(*) END AS n FROM cdm.person",
        },
    )
    out = tmp_path / "run"
    score(omop_db, suite.folder, tmp_path / "tasks.jsonl", out, tmp_path / "cache", preds)
    record = by_key(out)[("s-dropped", "en")]
    assert record["base_correct"] is True and record["outcome"] == "mismatch"
    assert record["suite"]["told_apart_by"] == "v1-even" and record["suite"]["dropped"]
    other = by_key(out)[("s-dropped", "ko")]
    assert other["outcome"] == "correct" and other["suite"]["dropped"]
    assert other["suite"]["variants_matched"] == 2
    assert (
        "2 of 2 variant(s) where the gold and the reference answer agree"
        in (other["suite"]["reason"])
    )


FAILS_ON_HALF = (
    "SELECT CAST(CASE WHEN count(*) = 565 THEN 'x' ELSE '1' END AS INTEGER) AS n FROM cdm.person"
)


def test_a_vocabulary_variant_judges_what_reads_the_vocabulary_it_changed(
    omop_db, tmp_path, monkeypatch
):
    # v2-vocab holds v1-even's clinical rows and a concept table where MALE's class is
    # no longer its domain: it tells apart the answers that read the class through the
    # concept table, and an answer naming no vocabulary table is judged for it by v1-even
    import pyarrow as pa

    from score.inputs.task_manifest import set_hash
    from score.scoring import suite_phase
    from tests.score.suite.made_suite import VARIANTS, make_suite
    from tests.task_factory import make_task, write_task_file

    class_of_male = "SELECT concept_class_id FROM cdm.concept WHERE concept_id = 8507"
    by_class = (
        "SELECT count(*) AS n FROM cdm.person p JOIN cdm.concept c "
        "ON c.concept_id = p.gender_concept_id WHERE c.concept_class_id = 'Gender'"
    )
    tasks = [
        make_task(
            "s-class",
            class_of_male,
            expect=(("Gender",),),
            columns=("concept_class_id",),
            types=("VARCHAR",),
        ),
        make_task("s-by-class", by_class),
        make_task("s-count", "SELECT count(*) AS n FROM cdm.person"),
        # its gold fails where half the persons are (v1-even's clinical rows, v2-vocab's too)
        make_task("s-fails", FAILS_ON_HALF, expect=((1,),)),
    ]
    write_task_file(tmp_path / "tasks.jsonl", tasks)
    with Executor(omop_db) as ex:
        concept = ex.execute("SELECT * FROM cdm.concept ORDER BY ALL").table
    rows = concept.to_pylist()
    for row in rows:
        if row["concept_id"] == 8507:
            row["concept_class_id"] = "Race"
    changed = pa.Table.from_pylist(rows, schema=concept.schema)
    suite = make_suite(
        omop_db,
        tmp_path / "suite",
        task_set_sha256=set_hash(tasks),
        cache=tmp_path / "databases",
        variants={"v1-even": VARIANTS["v1-even"], "v2-vocab": VARIANTS["v1-even"]},
        vocabularies={"v2-vocab": {"concept": changed}},
    )
    assert [v.own_vocabulary for v in suite.variants] == [False, True]
    count_answer = "SELECT COUNT(person_id) AS n FROM cdm.person"
    preds = write_predictions(
        tmp_path / "preds.jsonl",
        {
            ("s-class", "en"): class_of_male.replace("concept_class_id", "domain_id AS c", 1),
            ("s-by-class", "en"): by_class.replace("c.concept_class_id", "c.domain_id"),
            ("s-count", "en"): count_answer,
            ("s-fails", "en"): "SELECT 1 AS n",
        },
    )
    judged: list[set[str]] = []
    real = suite_phase.variant_pass

    def recording(checks, *args, **kwargs):
        judged.append({c.sql for c in checks})
        return real(checks, *args, **kwargs)

    monkeypatch.setattr(suite_phase, "variant_pass", recording)
    out = tmp_path / "run"
    score(omop_db, suite.folder, tmp_path / "tasks.jsonl", out, tmp_path / "cache", preds)
    records = by_key(out)
    for tid in ("s-class", "s-by-class"):
        record = records[(tid, "en")]
        assert record["base_correct"] is True and record["outcome"] == "mismatch", tid
        assert record["suite"]["told_apart_by"] == "v2-vocab", tid
    count = records[("s-count", "en")]
    assert count["outcome"] == "correct" and count["suite"]["variants_matched"] == 2
    assert sum(count_answer in texts for texts in judged) == 1  # run on v1-even alone
    # a gold that fails on v1-even fails on its twin too: left out there, not matched
    fails = records[("s-fails", "en")]["suite"]
    assert fails["gold_failed_on"] == ["v1-even", "v2-vocab"] and fails["variants_matched"] == 0
