"""The curation pipeline end to end on the real database: the project's own source file,
the OHDSI QueryLibrary pages, every reference rule, and the written files."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from click.testing import CliRunner

from curate.cli import main
from curate.pipeline import CurationOptions, curate_record, curate_records, curation_context
from curate.sources.records import SourceRecord, UnanswerableBecause
from curate.transpile.sqlglot_log import route_sqlglot_warnings
from curate.verify.reference_rules import ReferenceRules
from curate.write.curation import curate_to_files, review_page
from score.cli.exit_codes import FOUND_DIFFERENT
from score.execution.executor import Executor, ExecutorSettings
from score.inputs.task_set import load_tasks
from tests.paths import PROJECT_SOURCE, REPO

PROJECT_TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


@pytest.fixture(scope="module")
def project_run(executor, tmp_path_factory):
    out = tmp_path_factory.mktemp("project") / "omop_tasks.jsonl"
    return curate_to_files(PROJECT_SOURCE, "jsonl", executor, out=out)


def record(gold: str, *, answer: str | None = None, **extra) -> SourceRecord:
    return SourceRecord(
        id=extra.pop("id", "r1"),
        question="A question.",
        gold_sql=gold,
        gold_dialect=extra.pop("gold_dialect", "duckdb"),
        answer_sql=answer,
        answer_dialect="duckdb" if answer else None,
        **extra,
    )


def curated(rec: SourceRecord, executor, **options):
    with curation_context(executor, CurationOptions(**options)) as ctx:
        return curate_record(rec, ctx)


def verdict_of(rec: SourceRecord, executor, **options):
    return curated(rec, executor, **options)[1]


# -- the project's own benchmark ------------------------------------------------------


def test_project_source_is_kept_whole(project_run):
    counts = project_run.report["counts"]
    dropped = [r for r in project_run.report["records"] if r["status"] == "dropped"]
    assert dropped == [], dropped
    assert counts["records"] == counts["kept"] >= 180
    by_tier = counts["by_tier"]
    assert by_tier["simple"] >= 45
    assert by_tier["compositional"] >= 45
    assert by_tier["schema_aware"] >= 60
    assert by_tier["unanswerable"] >= 15


def test_project_tasks_meet_the_benchmark_targets(project_run):
    tasks = project_run.tasks
    assert sum(1 for t in tasks if "ko" in t["questions"]) >= 50
    categories = Counter(t["category"] for t in tasks if t["answerable"])
    for category in (
        "person",
        "observation_period",
        "visit",
        "condition",
        "condition_era",
        "drug",
        "drug_era",
        "procedure",
        "measurement",
        "observation",
        "death",
        "specimen",
        "vocabulary",
    ):
        assert categories[category] > 0, category
    for task in tasks:
        if task["answerable"]:
            assert task["gold_result"]["rows"] >= 1
            assert task["answer_sql"] and task["source_dialect"] == "tsql"
        else:
            assert (
                task["unanswerable_because"]["empty_tables"]
                or (task["unanswerable_because"]["null_columns"])
            )


def _without_paths(report: dict) -> dict:
    """A report minus the file paths, which depend on where it was written from."""
    out = {k: v for k, v in report.items() if k not in ("source", "tasks_file")}
    out["database"] = {k: v for k, v in report["database"].items() if k != "path"}
    return out


def test_committed_task_file_and_report_are_current(project_run):
    assert PROJECT_TASKS.read_bytes() == project_run.tasks_path.read_bytes(), (
        "data/benchmark/omop_tasks.jsonl is stale: run `make curate`"
    )
    committed = json.loads((PROJECT_TASKS.parent / "omop_report.json").read_text())
    # the versions first, with their own message: a report made under another sqlglot or
    # DuckDB is not stale, the environment is (the Makefile installs constraints.txt)
    assert committed["versions"] == project_run.report["versions"], (
        "the committed report was curated with other versions than are installed: "
        "install with `-c constraints.txt` (as the Makefile does), or run `make curate`"
    )
    assert _without_paths(committed) == _without_paths(project_run.report)


def test_curation_output_is_byte_identical_on_rerun(executor, project_run, tmp_path):
    again = curate_to_files(PROJECT_SOURCE, "jsonl", executor, out=tmp_path / "omop_tasks.jsonl")
    assert again.tasks_path.read_bytes() == project_run.tasks_path.read_bytes()
    assert again.report_path.with_suffix(".md").read_text().replace(
        str(tmp_path), "X"
    ) == project_run.report_path.with_suffix(".md").read_text().replace(
        str(project_run.tasks_path.parent), "X"
    )


def test_task_file_loads_with_the_scorer(project_run):
    assert len(load_tasks(project_run.tasks_path)) == len(project_run.tasks)


# -- OHDSI QueryLibrary pages ---------------------------------------------------------


def test_every_querylibrary_page_is_kept_or_dropped_with_a_named_reason(
    querylibrary_dir, executor, tmp_path
):
    run = curate_to_files(
        querylibrary_dir, "querylibrary", executor, out=tmp_path / "ql_tasks.jsonl"
    )
    records = run.report["records"]
    assert len(records) == 117
    assert run.report["problems"] == []
    for r in records:
        assert r["status"] in ("kept", "dropped")
        if r["status"] == "dropped":
            assert r["stage"] and r["rule"] and r["reason"], r
            assert r["stage"] != "internal", r
    kept = [r for r in records if r["status"] == "kept"]
    assert len(kept) == run.report["counts"]["kept"] == len(run.tasks) >= 23


def test_querylibrary_with_a_fixed_today_keeps_more(querylibrary_dir, omop_db, tmp_path):
    import datetime as dt

    settings = ExecutorSettings(today=dt.date(2025, 12, 31))
    with Executor(omop_db, settings=settings) as ex:
        run = curate_to_files(querylibrary_dir, "querylibrary", ex, out=tmp_path / "ql_tasks.jsonl")
    rules = run.report["counts"]["dropped_by_rule"]
    assert "verify/no_current_date" not in rules


# -- reference rules, one by one -----------------------------------------------------


@pytest.mark.parametrize(
    ("gold", "rule", "options"),
    [
        ("SELECT person_id FROM cdm.person WHERE person_id < 0", "min_rows", {}),
        ("SELECT person_id FROM cdm.person", "max_rows", {}),
        ("SELECT 0 AS a, NULL AS b", "not_all_zero_or_null", {}),
        ("SELECT count(*) FROM cdm.death WHERE death_date < current_date", "no_current_date", {}),
        ("SELECT person_id FROM cdm.person LIMIT 3", "limit_needs_order", {}),
        (
            "SELECT gender_concept_id FROM cdm.person ORDER BY gender_concept_id LIMIT 3",
            "no_ties_at_limit",
            {},
        ),
        ("SELECT random() AS r", "deterministic", {}),
        ("SELECT nope FROM cdm.person", "runs", {}),
    ],
)
def test_each_reference_rule_drops_with_its_name(executor, gold, rule, options):
    verdict = verdict_of(record(gold), executor, **options)
    assert verdict.status == "dropped"
    assert (verdict.stage, verdict.rule) == ("verify", rule), verdict.reason


def test_a_gold_that_is_not_one_select_never_runs(executor):
    verdict = verdict_of(record("DROP TABLE cdm.person"), executor)
    assert verdict.status == "dropped" and verdict.stage == "transpile"
    assert "DROP" in verdict.reason
    assert executor.execute("SELECT count(*) FROM cdm.person").rows() == [(1130,)]


@pytest.mark.parametrize(
    ("gold", "rules"),
    [
        ("SELECT person_id FROM cdm.person WHERE person_id < 0", ReferenceRules(min_rows=0)),
        ("SELECT person_id FROM cdm.person", ReferenceRules(max_rows=2000)),
        ("SELECT 0 AS a", ReferenceRules(not_all_zero_or_null=False)),
        (
            "SELECT count(*) FROM cdm.death WHERE death_date < now()",
            ReferenceRules(allow_current_date=True),
        ),
        ("SELECT random() AS r", ReferenceRules(deterministic=False)),
    ],
)
def test_each_rule_can_be_switched_off(executor, gold, rules):
    assert verdict_of(record(gold), executor, rules=rules).status == "kept"


def test_a_fixed_today_allows_current_date(omop_db):
    import datetime as dt

    with Executor(omop_db, settings=ExecutorSettings(today=dt.date(2025, 12, 31))) as ex:
        gold = "SELECT count(*) AS n FROM cdm.death WHERE death_date < current_date"
        assert verdict_of(record(gold), ex).status == "kept"


def test_a_tie_breaker_makes_a_limit_acceptable(executor):
    gold = (
        "SELECT person_id, gender_concept_id FROM cdm.person "
        "ORDER BY gender_concept_id, person_id LIMIT 3"
    )
    verdict = verdict_of(record(gold), executor)
    assert verdict.status == "kept", verdict.reason


# -- reference answers, collation, unanswerable claims -------------------------------


def test_a_matching_reference_answer_keeps_the_task(executor):
    rec = record(
        "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8532",
        answer="SELECT count(person_id) FILTER (WHERE gender_concept_id = 8532) FROM cdm.person",
        gold_dialect="tsql",
    )
    task, verdict = curated(rec, executor)
    assert verdict.status == "kept" and task["answer_sql"] and task["tier"] == "simple"


def test_a_different_reference_answer_drops_the_task(executor):
    rec = record(
        "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8532",
        answer="SELECT count(*) FROM cdm.person",
    )
    verdict = verdict_of(rec, executor)
    assert (verdict.stage, verdict.rule) == ("answer", "answer_matches")
    assert "differs" in verdict.reason


def test_integer_division_is_verified_with_sql_server_semantics(executor):
    rec = record(
        "SELECT COUNT(*) / 100 AS hundreds FROM cdm.person",
        answer="SELECT 11 AS h",
        gold_dialect="tsql",
    )
    assert verdict_of(rec, executor).status == "kept"


def test_case_dependent_sql_server_gold_is_dropped(executor):
    rec = record(
        "SELECT COUNT(*) AS n FROM cdm.concept WHERE concept_name LIKE '%sinusitis%'",
        gold_dialect="tsql",
    )
    verdict = verdict_of(rec, executor)
    assert verdict.rule == "case_insensitive_collation"
    # without the check nothing settles the collation warning
    assert verdict_of(rec, executor, collation_check=False).rule == "unresolved_semantics"
    kept = verdict_of(rec, executor, collation_check=False, unresolved_semantics=False)
    assert kept.status == "kept" and kept.warnings[0].startswith("collation: ")


def test_an_unsettled_transpile_warning_drops_the_gold_unless_switched_off(omop_db, tmp_path):
    source = tmp_path / "warned_source.jsonl"
    line = {
        "format": "sqlgold.source/1",
        "id": "w1",
        "question": "Three factorial quarters?",
        "gold_sql": "SELECT FACTORIAL(3) / 4 AS a",
        "gold_dialect": "tsql",
    }
    source.write_text(json.dumps(line) + "\n")
    runner = CliRunner()
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(tmp_path / "w.jsonl"), "-q"]
    assert runner.invoke(main, args).exit_code == 1  # no task kept: an error, reports written
    report = json.loads((tmp_path / "w_report.json").read_text())
    (entry,) = report["records"]
    assert (entry["stage"], entry["rule"]) == ("verify", "unresolved_semantics")
    assert "FACTORIAL(3) / 4 divides integers" in entry["reason"]
    assert report["counts"]["kept_with_warnings"] == 0
    assert report["settings"]["unresolved_semantics"]
    assert (
        "None: every kept gold's transpile warnings were settled."
        in (tmp_path / "w_report.md").read_text()
    )
    result = runner.invoke(main, [*args, "--allow-unresolved-semantics"])
    assert result.exit_code == 0 and "with unsettled transpile warnings 1" in result.output
    report = json.loads((tmp_path / "w_report.json").read_text())
    (entry,) = report["records"]
    assert entry["status"] == "kept" and report["counts"]["kept_with_warnings"] == 1
    assert entry["warnings"] == [
        "division: cannot tell whether FACTORIAL(3) / 4 divides integers; left as DuckDB division"
    ]
    assert (
        "- w1: division: cannot tell whether FACTORIAL(3) / 4"
        in (tmp_path / "w_report.md").read_text()
    )


def test_identical_gold_results_are_grouped_and_can_be_limited(executor, tmp_path):
    source = tmp_path / "same_source.jsonl"
    golds = {
        "a": "SELECT COUNT(*) AS n FROM cdm.person",
        "b": "SELECT COUNT(person_id) AS persons FROM cdm.person",
        "c": "SELECT COUNT(*) + 1 AS n FROM cdm.person",
    }
    source.write_text(
        "".join(
            json.dumps(
                {
                    "format": "sqlgold.source/1",
                    "id": i,
                    "question": "How many?",
                    "gold_sql": sql,
                    "gold_dialect": "duckdb",
                }
            )
            + "\n"
            for i, sql in golds.items()
        )
    )
    run = curate_to_files(source, "jsonl", executor, out=tmp_path / "same_tasks.jsonl")
    (group,) = run.report["identical_results"]
    assert group["ids"] == ["a", "b"] and group["rows"] == 1
    assert group["first_row"] == '[["n","1130"]]'
    assert run.report["counts"]["kept"] == 3
    markdown = run.report_path.with_suffix(".md").read_text()
    assert '| 2 | 1 | `[["n","1130"]]` | a, b |' in markdown
    limited = curate_to_files(
        source,
        "jsonl",
        executor,
        out=tmp_path / "one_tasks.jsonl",
        options=CurationOptions(max_per_result=1),
    )
    records = {r["id"]: r for r in limited.report["records"]}
    assert records["a"]["status"] == records["c"]["status"] == "kept"
    assert (records["b"]["stage"], records["b"]["rule"]) == ("verify", "max_per_result")
    assert records["b"]["reason"].startswith("its gold returns the very result of a (sha256 ")
    assert [t["id"] for t in limited.tasks] == ["a", "c"]


def test_unanswerable_claims_are_checked(executor):
    good = SourceRecord(
        id="u1",
        question="What did each visit cost?",
        answerable=False,
        unanswerable_because=UnanswerableBecause(("cost",), ("person.provider_id",)),
    )
    task, verdict = curated(good, executor)
    assert verdict.status == "kept" and task["tier"] == "unanswerable" and task["gold_sql"] is None
    wrong_table = SourceRecord(
        id="u2",
        question="?",
        answerable=False,
        unanswerable_because=UnanswerableBecause(("person",), ()),
    )
    assert verdict_of(wrong_table, executor).rule == "table_is_empty"
    wrong_column = SourceRecord(
        id="u3",
        question="?",
        answerable=False,
        unanswerable_because=UnanswerableBecause((), ("person.year_of_birth",)),
    )
    assert verdict_of(wrong_column, executor).rule == "column_is_null"


def test_a_task_that_fails_its_schema_names_the_id_and_json_path(executor):
    rec = record("SELECT count(*) AS n FROM cdm.person", id="bad id with spaces")
    verdict = verdict_of(rec, executor)
    assert (verdict.stage, verdict.rule) == ("validate", "task_schema")
    assert "$.id" in verdict.reason and verdict.id == "bad id with spaces"


def test_jobs_give_the_same_tasks(executor):
    recs = [
        record(f"SELECT {i} + count(*) AS n FROM cdm.person", id=f"r{i:02d}") for i in range(12)
    ]
    one, v1 = curate_records(recs, executor, jobs=1)
    two, v2 = curate_records(recs, executor, jobs=3)
    assert one == two and v1 == v2


# -- the command ----------------------------------------------------------------------


def test_curate_command_writes_files_and_strict_exit_code(omop_db, tmp_path):
    source = tmp_path / "mini_source.jsonl"
    lines = [
        {
            "format": "sqlgold.source/1",
            "id": "a",
            "question": "How many persons?",
            "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
            "gold_dialect": "tsql",
        },
        {
            "format": "sqlgold.source/1",
            "id": "b",
            "question": "Nothing?",
            "gold_sql": "SELECT person_id FROM cdm.person WHERE 1 = 0",
            "gold_dialect": "tsql",
        },
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    out = tmp_path / "mini_tasks.jsonl"
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(out), "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "mini_report.json").read_text())
    assert [(r["id"], r["status"]) for r in report["records"]] == [("a", "kept"), ("b", "dropped")]
    assert report["records"][1]["stage"] == "verify" and report["records"][1]["reason"]
    assert report["database"]["fingerprint"] and report["versions"]["sqlglot"]
    assert (tmp_path / "mini_report.md").exists() and len(out.read_text().splitlines()) == 2
    page = (tmp_path / "mini_report.html").read_text()  # the review page, beside the report
    assert '"id":"b"' in page and "Nothing?" in page and "dropped, by stage" in page
    strict = CliRunner().invoke(main, [*args, "--strict"])
    assert strict.exit_code == FOUND_DIFFERENT  # not 2, which is click's usage error


def test_curate_command_reports_a_malformed_source_line(omop_db, tmp_path):
    source = tmp_path / "bad_source.jsonl"
    source.write_text(
        '{"format": "sqlgold.source/1", "id": "a", "question": "q", "gold_sql": 1}\n{oops\n'
    )
    result = CliRunner().invoke(
        main,
        ["curate", str(source), "--db", str(omop_db), "--out", str(tmp_path / "t.jsonl"), "-q"],
    )
    assert result.exit_code == 1  # no task kept: the reports say why, no empty task file
    assert "no task kept of 1 record(s) (1 dropped, 1 unreadable" in result.output
    assert not (tmp_path / "t.jsonl").exists()
    report = json.loads((tmp_path / "t_report.json").read_text())
    assert report["counts"]["kept"] == 0
    where = [r for r in report["records"] if r["stage"] == "import"] + report["problems"]
    assert len(where) == 2


GOOD = {
    "format": "sqlgold.source/1",
    "id": "ok",
    "question": "How many persons?",
    "gold_sql": "SELECT COUNT(*) AS n FROM cdm.person",
    "gold_dialect": "tsql",
}


def _curate(omop_db, source, out, *extra):
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(out), "-q", *extra]
    return CliRunner().invoke(main, args)


def test_strict_counts_a_malformed_source_line(omop_db, tmp_path):
    """The issue: `curate --strict` with a malformed line printed `dropped 0`, exit 0."""
    source = tmp_path / "s_source.jsonl"
    source.write_text(json.dumps(GOOD) + "\n{oops\n")
    result = _curate(omop_db, source, tmp_path / "s_tasks.jsonl", "--strict")
    assert result.exit_code == FOUND_DIFFERENT, result.output
    assert "unreadable   1 source line(s)" in result.output
    assert "strict: 0 record(s) dropped, 1 unreadable" in result.output
    assert len(load_tasks(tmp_path / "s_tasks.jsonl")) == 1  # the files are still written


def test_tasks_with_and_without_a_category_are_reported(omop_db, tmp_path):
    """The issue: a TypeError traceback in the report, after the task file was written."""
    source = tmp_path / "c_source.jsonl"
    other = {**GOOD, "id": "other", "category": "person"}
    source.write_text(json.dumps(GOOD) + "\n" + json.dumps(other) + "\n")
    result = _curate(omop_db, source, tmp_path / "c_tasks.jsonl")
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "c_report.json").read_text())
    assert report["counts"]["by_category"] == {"person": 1, "(none)": 1}
    assert "| (none) | 1 |" in (tmp_path / "c_report.md").read_text()


def test_an_empty_source_is_an_error_and_writes_nothing(omop_db, tmp_path):
    source = tmp_path / "e_source.jsonl"
    source.write_text("\n")
    result = _curate(omop_db, source, tmp_path / "e_tasks.jsonl")
    assert result.exit_code == 1
    assert result.output == f"error: [import] {source}: the source holds no records\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e_source.jsonl"]


@pytest.mark.parametrize("where", ["under_a_file", "proc"])
def test_an_unwritable_out_or_report_fails_before_curating(omop_db, tmp_path, where):
    """The issue: a 36-line traceback, and the task file written all the same."""
    source = tmp_path / "w_source.jsonl"
    source.write_text(json.dumps(GOOD) + "\n")
    (tmp_path / "plain").write_text("a file")
    out = tmp_path / "w_tasks.jsonl"
    report = tmp_path / "plain" / "r.json" if where == "under_a_file" else "/proc/sqlgold/r.json"
    result = _curate(omop_db, source, out, "--report", str(report))
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and result.output.startswith("error: [curate] ")
    assert str(report) in result.output
    assert not out.exists()


def test_committed_examples_document_is_current_and_leak_free(project_run):
    from curate.grounding.examples_doc import examples_document, leaked_tasks
    from score.inputs.split import split_tasks

    split = split_tasks(project_run.tasks, test_fraction=0.5, seed=0)
    document = examples_document(split["train"])
    committed = (REPO / "data" / "grounding" / "examples.md").read_text(encoding="utf-8")
    assert committed == document, "data/grounding/examples.md is stale: run `make curate`"
    assert leaked_tasks(committed, split["test"]) == []
    for task in split["test"]:
        if task["gold_sql"]:
            assert task["gold_sql"] not in committed and task["answer_sql"] not in committed


def test_sqlglot_warnings_go_through_logging_and_quiet_silences_them(omop_db, tmp_path):
    import subprocess
    import sys

    source = tmp_path / "noisy_source.jsonl"
    source.write_text(
        "".join(
            json.dumps(
                {
                    "format": "sqlgold.source/1",
                    "id": f"n{i}",
                    "question": "q?",
                    "gold_sql": f"CREATE LOGIN x{i}; SELECT {i} AS a",
                    "gold_dialect": "tsql",
                }
            )
            + "\n"
            for i in range(1, 3)
        )
        + json.dumps(
            {
                "format": "sqlgold.source/1",
                "id": "ok",
                "question": "How many persons?",
                "gold_sql": "SELECT COUNT(*) AS n FROM person",
                "gold_dialect": "tsql",
            }
        )
        + "\n"
    )  # one kept task: a run that keeps none is an error
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(tmp_path / "n.jsonl")]
    command = [sys.executable, "-m", "curate.cli", *args, "--jobs", "2", "-q"]
    quiet = subprocess.run(command, capture_output=True, text=True, check=True)
    assert quiet.stderr == ""  # nothing raw from the parent or the worker processes
    loud = CliRunner().invoke(main, args)
    assert loud.exit_code == 0
    assert "sqlglot: WARNING: 'CREATE LOGIN x1' contains unsupported syntax" in loud.stderr
    route_sqlglot_warnings(quiet=True)  # no handler left on the test runner's stderr


def test_the_committed_review_page_is_current() -> None:
    """data/benchmark/omop_report.html is what `make curate` writes from the committed
    report, tasks and sources (run `make curate` when this fails)."""
    folder = PROJECT_TASKS.parent
    report = json.loads((folder / "omop_report.json").read_text(encoding="utf-8"))
    lines = PROJECT_TASKS.read_text(encoding="utf-8").splitlines()[1:]
    sources = (folder / "omop_source.jsonl").read_text(encoding="utf-8").splitlines()
    page = review_page(
        report, [json.loads(t) for t in lines], [json.loads(s) for s in sources if s.strip()]
    )
    assert page == (folder / "omop_report.html").read_text(encoding="utf-8")
