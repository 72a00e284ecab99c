"""Alternative golds round-trip: a source record with alternative golds is curated (each
verified), published (loaded back with ``datasets``), and scored (the best match taken,
``matched_gold`` saying which); a failing alternative drops its record by name; a task
file without alternatives keeps format 1.1 byte for byte."""

from __future__ import annotations

import json

from click.testing import CliRunner

from curate.cli import main
from curate.pipeline import CurationOptions, curate_record, curation_context
from curate.sources.records import AlternativeGold, SourceRecord
from score.execution.executor import Executor
from score.inputs.schemas import validation_errors
from score.inputs.task_manifest import item_hash
from score.scoring.run import ScoringOptions, run_scoring
from tests.curate.publish.test_release import load_offline

GOLD = "SELECT gender_concept_id, count(*) AS n FROM cdm.person GROUP BY 1"
BY_NAME = (
    "SELECT c.concept_name, count(*) AS n FROM cdm.person AS p "
    "JOIN cdm.concept AS c ON c.concept_id = p.gender_concept_id GROUP BY 1"
)
COUNT = "SELECT count(*) AS n FROM cdm.person"


def source_line(id_: str, gold: str, alternatives=(), answer=None) -> dict:
    line = {"format": "sqlgold.source/1", "id": id_, "question": f"{id_}?", "gold_sql": gold}
    line["gold_dialect"] = "duckdb"
    if alternatives:
        line["format"] = "sqlgold.source/2"
        line["alternative_golds"] = [{"gold_sql": a} for a in alternatives]
    if answer:
        line.update(answer_sql=answer, answer_dialect="duckdb")
    return line


def test_alternative_golds_round_trip_through_curate_publish_and_score(omop_db, tmp_path):
    source = tmp_path / "alt_source.jsonl"
    lines = [
        source_line("a-genders", GOLD, [BY_NAME], answer=BY_NAME.replace("AS n", "AS k")),
        source_line("b-count", COUNT),
        source_line("c-count-again", COUNT.replace("count(*)", "count(person_id)")),
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    tasks_path = tmp_path / "alt_tasks.jsonl"
    runner = CliRunner()
    ran = runner.invoke(
        main, ["curate", str(source), "--db", str(omop_db), "--out", str(tasks_path), "--no-cache"]
    )
    assert ran.exit_code == 0, ran.output
    tasks = {t["id"]: t for t in map(json.loads, tasks_path.read_text().splitlines()[1:])}
    genders = tasks["a-genders"]
    assert genders["schema_version"] == "1.2" and tasks["b-count"]["schema_version"] == "1.1"
    (alternative,) = genders["alternative_golds"]
    assert alternative["source_sql"] == BY_NAME and alternative["gold_result"]["rows"] == 2
    assert "alternative_golds" not in tasks["b-count"]

    published = runner.invoke(
        main,
        ["publish", str(tasks_path), "--version", "0.1.0", "--db", str(omop_db)]
        + ["--out", str(tmp_path / "releases"), "--test-fraction", "1"],
    )
    assert published.exit_code == 0, published.output
    folder = tmp_path / "releases" / "alt" / "0.1.0"
    loaded = load_offline(folder, tmp_path)
    back = {t["id"]: t for t in loaded["test"]}
    assert back["a-genders"]["alternative_golds"] == genders["alternative_golds"]
    assert "alternative_golds" not in back["b-count"]
    assert back == {
        i: {**t, "origin": t.get("origin"), "notes": t.get("notes")} for i, t in tasks.items()
    }

    preds = tmp_path / "preds.jsonl"
    answers = [
        ("a-genders", BY_NAME),  # the alternative's result only
        ("b-count", COUNT),
        ("c-count-again", "SELECT 1 AS n"),
    ]
    preds.write_text("".join(json.dumps({"task_id": i, "sql": s}) + "\n" for i, s in answers))
    out = tmp_path / "run"
    options = ScoringOptions(cache_dir=None, split="all", with_priors=False)
    with Executor(omop_db) as ex:
        run_scoring(folder, preds, out, ex, options)
    records = {
        r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    assert records["a-genders"]["outcome"] == "correct"
    assert records["a-genders"]["matched_gold"] == 1
    assert records["a-genders"]["reason"].startswith("matches alternative gold 1")
    assert "matched_gold" not in records["b-count"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["alternative_golds"] == {
        "instances": 1,
        "correct_by_gold": 0,
        "correct_by_alternative": 1,
    }


def curate_one(executor, record: SourceRecord):
    with curation_context(executor, CurationOptions(gold_cache=None)) as ctx:
        return curate_record(record, ctx)


def test_a_failing_alternative_drops_its_record_by_name(executor):
    record = SourceRecord(
        id="r",
        question="Q?",
        gold_sql=GOLD,
        gold_dialect="duckdb",
        alternative_golds=(AlternativeGold("SELECT nope FROM cdm.person"),),
    )
    task, verdict = curate_one(executor, record)
    assert task is None and verdict.rule == "runs"
    assert verdict.reason.startswith("alternative gold 1: the gold fails")
    empty = AlternativeGold("SELECT person_id FROM cdm.person WHERE person_id < 0")
    _, verdict = curate_one(
        executor, SourceRecord(**{**record.__dict__, "alternative_golds": (empty,)})
    )
    assert verdict.rule == "min_rows" and "alternative gold 1" in verdict.reason


def test_an_answer_matching_neither_gold_nor_alternative_is_dropped(executor):
    record = SourceRecord(
        id="r",
        question="Q?",
        gold_sql=GOLD,
        gold_dialect="duckdb",
        alternative_golds=(AlternativeGold(BY_NAME),),
        answer_sql=COUNT,
        answer_dialect="duckdb",
    )
    _, verdict = curate_one(executor, record)
    assert verdict.status == "dropped" and verdict.rule == "answer_matches"
    assert "none of 2 gold answers" in verdict.reason


def test_the_task_format_ties_alternatives_to_version_1_2(executor):
    record = SourceRecord(
        id="r", question="Q?", gold_sql=GOLD, gold_dialect="duckdb",
        alternative_golds=(AlternativeGold(BY_NAME),),
    )  # fmt: skip
    task, _ = curate_one(executor, record)
    assert validation_errors("task", task) == []
    assert validation_errors("task", {**task, "schema_version": "1.1"})
    plain = {k: v for k, v in task.items() if k != "alternative_golds"}
    assert validation_errors("task", plain)  # 1.2 without alternatives
    assert validation_errors("task", {**plain, "schema_version": "1.1"}) == []
    assert item_hash(task) != item_hash({**plain, "schema_version": "1.1"})
    assert item_hash({**plain, "schema_version": "1.1"}) == item_hash(
        {**plain, "alternative_golds": None}
    )


def test_a_source_record_with_alternatives_must_say_format_2() -> None:
    from curate.sources.records import check_object

    line = source_line("x", GOLD, [BY_NAME])
    assert check_object(line) == []
    problems = check_object({**line, "format": "sqlgold.source/1"})
    assert [p.reason for p in problems] == ["schema"]
    record = SourceRecord.from_dict(line)
    assert record.alternative_golds == (AlternativeGold(BY_NAME),)
    assert record.to_dict()["format"] == "sqlgold.source/2"
