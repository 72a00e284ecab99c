"""score run --efficiency: right answers timed against their golds (VES, R-VES) or their
plans' EXPLAIN costs compared, in the query processes, on DuckDB and PostgreSQL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from curate.cli import main
from score.errors import ScoringError
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError
from score.inputs.schemas import validation_errors
from score.scoring.efficiency import PlanCosts, TimePair, check_method
from score.scoring.run import ScoringOptions, run_scoring
from tests.task_factory import make_task, write_task_file

GOLD = "SELECT count(*) AS n FROM cdm.person"
# the same count through a needless semi-join: a bigger plan, a slower query
SLOWER = (
    "SELECT count(*) AS n FROM cdm.person p WHERE p.person_id IN (SELECT person_id FROM cdm.person)"
)


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("efficiency")
    tasks = [make_task(f"q{i}") for i in range(1, 4)] + [make_task("u1", None)]
    tasks_path = write_task_file(folder / "tasks.jsonl", tasks)
    lines = [
        {"task_id": "q1", "sql": GOLD},
        {"task_id": "q2", "sql": SLOWER},
        {"task_id": "q3", "sql": "SELECT 1 AS n"},  # wrong: adds 0
        {"task_id": "u1", "output": "ABSTAIN"},  # unanswerable: no part of the score
    ]
    preds = folder / "preds.jsonl"
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return tasks_path, preds


def _run(inputs, out: Path, executor, method: str, runs: int | None = None):
    options = ScoringOptions(
        cache_dir=None, with_priors=False, efficiency=method, efficiency_runs=runs
    )
    summary = run_scoring(*inputs, out, executor, options).summary
    records = {
        r["task_id"]: r for r in map(json.loads, (out / "results.jsonl").read_text().splitlines())
    }
    return summary, records


def test_ves_times_each_right_answer_against_its_gold(inputs, executor, tmp_path) -> None:
    summary, records = _run(inputs, tmp_path / "ves", executor, "ves", runs=3)
    assert validation_errors("summary", summary) == []
    e = summary["efficiency"]
    assert (e["method"], e["label"], e["runs"]) == ("ves", "VES", 3)
    assert (e["n"], e["n_correct"], e["n_measured"], e["n_failed"]) == (3, 2, 2, 0)
    assert "efficiency" not in records["q3"] and "efficiency" not in records["u1"]
    ratios = [records[q]["efficiency"]["ratio"] for q in ("q1", "q2")]
    assert all(r > 0 for r in ratios)
    assert records["q1"]["efficiency"]["gold_seconds"] > 0
    assert e["score"] == pytest.approx(100 * sum(r**0.5 for r in ratios) / 3)
    # the report says which measure and how many runs
    lines = (tmp_path / "ves" / "summary.json").read_text()
    assert '"method": "ves"' in lines and '"runs": 3' in lines


def test_r_ves_defaults_to_100_runs_and_buckets_the_ratios(inputs, executor, tmp_path) -> None:
    summary, records = _run(inputs, tmp_path / "rves", executor, "rves")
    e = summary["efficiency"]
    assert e["runs"] == 100 and sum(e["rewards"].values()) == 2
    assert e["score"] <= 100 * 2 * 1.25**0.5 / 3


def test_cost_is_deterministic_and_prefers_the_smaller_plan(inputs, executor, tmp_path) -> None:
    first, records = _run(inputs, tmp_path / "cost1", executor, "cost")
    again, _ = _run(inputs, tmp_path / "cost2", executor, "cost")
    assert first["efficiency"] == again["efficiency"]
    assert first["efficiency"]["runs"] == 1
    same, slower = records["q1"]["efficiency"], records["q2"]["efficiency"]
    assert same["ratio"] == 1.0 and same["gold_cost"] == same["pred_cost"] > 0
    assert slower["ratio"] < 1.0 and slower["pred_cost"] > slower["gold_cost"]


def test_the_timing_stays_inside_the_time_limit(omop_db) -> None:
    # 2 x 5,000 runs cannot finish in one second: the request stops at its limit
    settings = ExecutorSettings(timeout_seconds=1)
    with Executor(omop_db, settings=settings) as ex:
        with pytest.raises(QueryError) as stopped:
            ex.call(TimePair(GOLD, GOLD, runs=5000))
        assert stopped.value.kind == "timeout"
        gold_times, pred_times = ex.call(TimePair(GOLD, SLOWER, runs=2))
        assert len(gold_times) == len(pred_times) == 2


def test_a_right_answer_that_cannot_be_measured_scores_zero(inputs, omop_db, tmp_path) -> None:
    settings = ExecutorSettings(timeout_seconds=1)
    with Executor(omop_db, settings=settings) as ex:
        summary, records = _run(inputs, tmp_path / "slow", ex, "ves", runs=20_000)
    e = summary["efficiency"]
    assert (e["n_correct"], e["n_failed"], e["score"]) == (2, 2, 0.0)
    assert records["q1"]["efficiency"]["error"].startswith("timeout")


def test_the_guard_applies_to_both_queries(executor) -> None:
    with pytest.raises(QueryError) as refused:
        executor.call(PlanCosts(GOLD, "DELETE FROM cdm.person"))
    assert refused.value.kind in ("guard_rejected", "parse_error")


def test_unknown_measures_bad_runs_and_engines_without_costs_are_refused() -> None:
    assert check_method("ves", None, "duckdb") == 10 and check_method("rves", 7, "spark") == 7
    with pytest.raises(ScoringError, match="spark gives no plan cost"):
        check_method("cost", None, "spark")
    with pytest.raises(ScoringError, match="unknown efficiency measure"):
        check_method("speed", None, "duckdb")
    with pytest.raises(ScoringError, match="at least 1"):
        check_method("ves", 0, "duckdb")


def test_the_command_line_says_which_measure_and_how_many_runs(inputs, omop_db, tmp_path):
    out = tmp_path / "cli"
    args = ["score", "run", *map(str, inputs), "--out", str(out), "--split", "all"]
    args += ["--db", str(omop_db), "--no-cache", "-q", "--efficiency", "ves"]
    ran = CliRunner().invoke(main, [*args, "--efficiency-runs", "2"])
    assert ran.exit_code == 0, ran.output
    assert "VES" in ran.output and "(2 timed runs per query; 2 right answers measured" in ran.output
    reported = CliRunner().invoke(main, ["score", "report", str(out)])
    assert reported.exit_code == 0, reported.output
    text = (out / "report.md").read_text()
    assert "## Efficiency" in text and "| VES |" in text and "2 timed runs per query" in text


def test_postgresql_gives_its_plans_total_cost(pg_cdm) -> None:
    with Executor(pg_cdm.reader_url, settings=ExecutorSettings(timeout_seconds=10)) as ex:
        gold_cost, pred_cost = ex.call(PlanCosts(GOLD, SLOWER, gold_dialect="duckdb"))
        assert 0 < gold_cost < pred_cost
        assert ex.call(PlanCosts(GOLD, GOLD, gold_dialect="duckdb")) == (gold_cost, gold_cost)
        gold_times, pred_times = ex.call(TimePair(GOLD, SLOWER, runs=2, gold_dialect="duckdb"))
        assert len(gold_times) == 2 and min(pred_times) > 0
