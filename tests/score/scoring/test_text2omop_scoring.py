"""TEXT-TO-OMOP result files scored end to end on the real database with the ``text2omop``
profile: every branch of its evaluator (gold fails, prediction fails, abstention on
answerable and unanswerable items, swapped columns, NULLs, an empty pred), its metrics
against values worked out by hand, and its five published prediction styles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.comparison.result_hash import result_sha256
from score.execution.result import QueryResult
from score.inputs.schemas import validation_errors
from score.inputs.text2omop import NO_SQL, content_id
from score.scoring.run import ScoringOptions, run_scoring
from tests.task_factory import make_task, pinned_hash, write_task_file

# name: (question, PostgreSQL gold as the benchmark writes it, the task's DuckDB gold)
ITEMS = {
    "T1": (
        "How many persons?",
        "SELECT COUNT(*) AS n FROM person;",
        "SELECT count(*) AS n FROM cdm.person",
    ),
    "T2": (
        "How many deaths?",
        "SELECT COUNT(*) AS n FROM death;",
        "SELECT count(*) AS n FROM cdm.death",
    ),
    "T3": (
        "Count the ghosts.",
        "SELECT COUNT(*) AS n FROM no_such_table;",
        "SELECT count(*) AS n FROM cdm.no_such_table",
    ),
    "T4": (
        "Count the spirits.",
        "SELECT COUNT(*) AS n FROM other_missing_table;",
        "SELECT count(*) AS n FROM cdm.other_missing_table",
    ),
    "T5": (
        "Latest birth year?",
        "SELECT MAX(year_of_birth) AS y FROM person;",
        "SELECT max(year_of_birth) AS y FROM cdm.person",
    ),
    "T6": (
        "Earliest birth year?",
        "SELECT MIN(year_of_birth) AS y FROM person;",
        "SELECT min(year_of_birth) AS y FROM cdm.person",
    ),
    "T7": (
        "Two pairs.",
        "SELECT 1 AS a, 2 AS b UNION ALL SELECT 3, 4;",
        "SELECT 1 AS a, 2 AS b UNION ALL SELECT 3, 4",
    ),
    "T8": (
        "Nothing at all.",
        "SELECT CAST(NULL AS TEXT) AS x;",
        "SELECT CAST(NULL AS VARCHAR) AS x",
    ),
    "T9": (
        "How many visits?",
        "SELECT COUNT(*) AS n FROM visit_occurrence;",
        "SELECT count(*) AS n FROM cdm.visit_occurrence",
    ),
    "U1": ("Phone of patient <PERSON_ID>7</PERSON_ID>?", NO_SQL, None),
    "U2": ("Blood type of patient <PERSON_ID>8</PERSON_ID>?", NO_SQL, None),
}

# the prediction of each item, and the outcome sqlgold gives it under text2omop
PREDS = {
    "T1": ("SELECT COUNT(*) AS n FROM person;", "correct"),
    "T2": ("SELECT COUNT(*) AS n FROM person;", "mismatch"),
    "T3": ("SELECT 0 AS n;", "gold_error"),  # runs; its gold does not
    "T4": (NO_SQL, "abstained"),  # declined; its gold fails
    "T5": (NO_SQL, "abstained"),  # declined; its gold runs
    "T6": ("SELECT MIN(year_of_birt) AS y FROM person;", "render_error"),
    "T7": ("SELECT 2 AS b, 1 AS a UNION ALL SELECT 3, 4;", "correct"),  # first row swapped
    "T8": ("SELECT '' AS x;", "correct"),  # NULL read as ''
    "T9": ("", "parse_error"),  # empty: an answer that fails, as the evaluator takes it
    "U1": (NO_SQL, "abstained"),
    "U2": ("SELECT 1;", "mismatch"),
}


def _task(question: str, pg_gold: str, duck_gold: str | None, executor) -> dict:
    task = make_task(content_id(question, pg_gold), duck_gold)
    task.update(question=question, questions={"en": question})
    if duck_gold is None:
        return task
    task.update(source_sql=pg_gold, source_dialect="postgres")
    found = executor.try_execute(duck_gold)
    if isinstance(found, QueryResult):
        task["gold_result"] = {
            "sha256": result_sha256(found, ordered=False),
            "rows": found.num_rows,
            "columns": list(found.columns),
            "types": list(found.types),
        }
    else:  # a gold that fails here: pinned to anything
        task["gold_result"]["sha256"] = pinned_hash([(0,)])
    return task


@pytest.fixture(scope="module")
def tasks_path(executor, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("t2o") / "tasks.jsonl"
    return write_task_file(path, [_task(*item, executor) for item in ITEMS.values()])


def _result_file(path: Path, preds: dict[str, str]) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for name, pred in preds.items():
            question, gold, _ = ITEMS[name]
            f.write(json.dumps({"input": question, "gold": gold, "pred": pred}) + "\n")
    return path


def _score(tasks_path: Path, preds: Path, out: Path, executor, profile="text2omop"):
    options = ScoringOptions(profile=profile, cache_dir=None, with_priors=False, split=None)
    outcome = run_scoring(tasks_path, preds, out, executor, options)
    records = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
    by_name = {n: r for n in ITEMS for r in records if r["task_id"] == content_id(*ITEMS[n][:2])}
    return outcome.summary, by_name


def test_every_branch_and_every_metric(tasks_path, executor, tmp_path) -> None:
    preds = _result_file(tmp_path / "results_m.jsonl", {n: p for n, (p, _) in PREDS.items()})
    summary, records = _score(tasks_path, preds, tmp_path / "run", executor)
    assert {n: r["outcome"] for n, r in records.items()} == {n: o for n, (_, o) in PREDS.items()}
    assert records["T9"]["reason"].startswith("empty SQL")
    assert records["T1"]["output"] == PREDS["T1"][0]  # the pred as given is recorded
    assert validation_errors("summary", summary) == []
    m = summary["text2omop"]
    # text metrics over the 9 answerable items; ROUGE-L of each, from whitespace tokens:
    # T1 1, T2 5/6, T6 5/6, T7 8/12, T8 3 shared of 6 and 4 tokens (0.6), T3 2 of 6 and 4
    # (0.4), T4 T5 (<NO_SQL>) and T9 (empty) 0
    assert m["n_examples"] == 11 and m["n_answerable"] == 9
    assert m["em"] == pytest.approx(1 / 9) and m["emn"] == pytest.approx(1 / 9)
    assert m["rouge_l"] == pytest.approx((1 + 5 / 6 + 5 / 6 + 8 / 12 + 0.6 + 0.4) / 9)
    # answering: TP T1 T2 T3 T6 T7 T8 T9, FP U2, FN T4 T5
    assert (m["tp_ans"], m["fp_ans"], m["fn_ans"]) == (7, 1, 2)
    assert m["f1_ans"] == pytest.approx(14 / 17)
    # execution: T3 and T4's golds fail; of T1 T2 T5 T6 T7 T8 T9, T1 T7 T8 are right
    assert (m["gold_exec_errors"], m["pred_exec_errors"]) == (2, 2)
    assert (m["actually_answerable"], m["predicted_answerable"]) == (7, 6)
    assert m["execution_accuracy"] == pytest.approx(3 / 7)
    assert m["prec_exe"] == pytest.approx(3 / 6)
    assert m["f1_exe"] == pytest.approx(6 / 13)
    # RS over the 9 items whose gold runs or that are unanswerable: 4 right, 4 wrong, 1 declined
    assert m["rs_n"] == 9
    assert m["rs"] == pytest.approx({"0": 4 / 9, "1": 0.0, "10": -36 / 9, "N": -32 / 9})


def test_sqlgolds_own_rule_differs_on_swapped_values_and_null(tasks_path, executor, tmp_path):
    preds = _result_file(tmp_path / "r.jsonl", {n: PREDS[n][0] for n in ("T7", "T8")})
    summary, records = _score(tasks_path, preds, tmp_path / "own", executor, profile="sqlgold")
    assert records["T7"]["outcome"] == records["T8"]["outcome"] == "mismatch"
    assert "text2omop" not in summary
    assert summary["split"]["predictions_without_task"] == 0


# the published files' five styles (red1dwarf/TEXT-TO-OMOP f5c858f INFERENCE/): what each
# model wrote for a count, for an unanswerable question, and the outcomes they get
STYLES = {
    "llama3_base": ("SELECT \n  COUNT(*) AS n\nFROM \n  person", NO_SQL, "correct", "abstained"),
    "mistral_7b_instruct_v0_3": (
        "To count patients we use the person table.\n\n"
        "```sql\nSELECT COUNT(*) AS n FROM person;\n```",
        "This cannot be answered from OMOP data: <NO_SQL>",
        "parse_error",  # the evaluator runs the text as it is: prose fails
        "parse_error",  # an answer (prose) to an unanswerable question: wrong either way
    ),
    "natural_sql_7b": (
        "SELECT COUNT(*) AS n -- every person\nFROM person",
        "SELECT 1",
        "correct",
        "mismatch",
    ),
    "lora_checkpoint-150": (
        "SELECT COUNT(*) AS n FROM person;",
        "<NO_SQL>",
        "correct",
        "abstained",
    ),
    "lora_checkpoint-312": (
        "  SELECT count(*) AS n FROM person ;  ",
        " <NO_SQL> ",
        "correct",
        "abstained",
    ),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_each_published_style_scores_end_to_end(style, tasks_path, executor, tmp_path) -> None:
    count, unanswerable, count_outcome, unanswerable_outcome = STYLES[style]
    path = _result_file(tmp_path / f"results_{style}.jsonl", {"T1": count, "U1": unanswerable})
    summary, records = _score(tasks_path, path, tmp_path / "run", executor)
    assert summary["run"] == f"results_{style}"
    assert records["T1"]["outcome"] == count_outcome
    assert records["U1"]["outcome"] == unanswerable_outcome
    missing = [n for n, r in records.items() if r["outcome"] == "missing"]
    assert len(missing) == len(ITEMS) - 2
    m = summary["text2omop"]  # an item with no line counts as an empty pred: answered, failed
    assert m["n_examples"] == len(ITEMS)
    assert m["fp_ans"] == 1 + (unanswerable_outcome != "abstained")


def test_the_command_line_prints_and_reports_the_metrics(tasks_path, omop_db, tmp_path) -> None:
    preds = _result_file(tmp_path / "results_m.jsonl", {n: p for n, (p, _) in PREDS.items()})
    out = tmp_path / "cli"
    args = ["score", "run", str(tasks_path), str(preds), "--out", str(out)]
    args += ["--profile", "text2omop", "--no-cache", "-q", "--db", str(omop_db)]
    ran = CliRunner().invoke(main, args)
    assert ran.exit_code == 0, ran.output
    assert "split        all (11 of 11 tasks)" in ran.output
    assert "TEXT-TO-OMOP EA 0.4286  F1_exe 0.4615  F1_ans 0.8235" in ran.output
    reported = CliRunner().invoke(main, ["score", "report", str(out)])
    assert reported.exit_code == 0, reported.output
    assert "RS(0) 0.4444  RS(1) 0.0000  RS(10) -4.0000  RS(N) -3.5556" in reported.output
    text = (out / "report.md").read_text()
    assert "## TEXT-TO-OMOP metrics" in text and "| Execution accuracy | 0.4286 |" in text
