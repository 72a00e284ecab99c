"""score.report.markdown (report.md) and the JSON Schemas of summary.json and results.json."""

from __future__ import annotations

import json

import jsonschema
import pytest

import score.report.markdown as report
from score.report.markdown import PRIORS_NOTE, render_report
from score.statistics.metrics import record
from score.statistics.stats import compare_runs
from score.statistics.summary import SUMMARY_FORMAT, summarize
from tests.paths import REPO

SCHEMAS = REPO / "schemas"
META = {
    "database": "synthea1k fp:0123abcd",
    "task_set": "omop 1.0",
    "comparator_profile": "sqlgold",
}


def schema(name):
    doc = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(doc)
    return jsonschema.Draft202012Validator(doc)


def model_run(run="model", flip=()):
    recs = []
    for i in range(12):
        tier = ("simple", "compositional", "schema_aware")[i % 3]
        answerable = i % 4 != 3
        for lang in ("en", "ko"):
            right = (i % 3 != 1) != (i in flip)
            outcome = ("correct" if right else "mismatch") if answerable else "abstained"
            recs.append(
                record(
                    f"q{i:02d}",
                    outcome,
                    language=lang,
                    answerable=answerable,
                    tier=tier,
                    run=run,
                    category="cohort" if i % 2 else "lookup",
                    lf_match=right,
                )
            )
    return recs


def prior_run(outcome, run):
    return [{**r, "outcome": outcome, "run": run, "lf_match": None} for r in model_run()]


@pytest.fixture(scope="module")
def runs():
    return [
        summarize(model_run("model-a"), resamples=300),
        summarize(prior_run("abstained", "prior/abstain-all"), resamples=300, prior=True),
        summarize(model_run("model-b", flip=(1, 4)), resamples=300),
    ]


@pytest.fixture(scope="module")
def comparison():
    return compare_runs(
        model_run("model-a"), model_run("model-b", flip=(1, 4)), resamples=300, brittleness=True
    )


def test_report_is_deterministic(runs, comparison):
    first = render_report(runs, comparison, meta=META)
    assert first == render_report(runs, comparison, meta=META)
    assert first.endswith("\n") and not first.endswith("\n\n")


def test_meta_lines_and_bootstrap_settings(runs):
    text = render_report(runs, meta={**META, "Model": "qwen2.5:7b"})
    assert "- Database: synthea1k fp:0123abcd" in text
    assert "- Task set: omop 1.0" in text
    assert "- Comparator profile: sqlgold" in text
    assert "- Model: qwen2.5:7b" in text
    assert "95% percentile bootstrap, 300 resamples of questions" in text
    assert "seed 0 (numpy.random.RandomState (MT19937))" in text


def test_meta_is_required():
    s = summarize(model_run(), resamples=50)
    with pytest.raises(ValueError, match="report meta lacks comparator_profile"):
        render_report([s], meta={"database": "d", "task_set": "t"})


def test_headline_has_every_score_with_its_interval(runs):
    text = render_report(runs, meta=META)
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| ")}
    for label in (
        "EX",
        "RS(0)",
        "RS(5)",
        "RS(10)",
        "RS(N)",
        "Abstained, answerable",
        "Abstained, unanswerable",
        "Cut off",
        "Format failure",
        "LF accuracy",
    ):
        assert label in rows
    a = runs[0]
    assert f"| EX | {a['ex']:.3f} [{a['ex_ci'][0]:.3f}, {a['ex_ci'][1]:.3f}] |" in rows["EX"]
    assert f"{a['rs']['N']:.2f} [" in rows["RS(N)"]
    assert rows["LF accuracy"].endswith("| – |")  # the prior has no LF; it is listed last


def test_priors_come_after_models_and_are_explained(runs):
    text = render_report(runs, meta=META)
    header = next(line for line in text.splitlines() if line.startswith("| Score |"))
    assert header == "| Score | model-a | model-b | prior/abstain-all (prior) |"
    assert PRIORS_NOTE in text
    assert PRIORS_NOTE not in render_report([runs[0]], meta=META)


def test_breakdowns(runs):
    text = render_report(runs, meta=META)
    assert "## By tier" in text and "## By category" in text and "## By language" in text
    assert "## By difficulty" not in text  # every difficulty is None: no table
    by_tier = text.split("## By tier")[1].split("\n## ")[0]
    tier_rows = [line for line in by_tier.splitlines() if line.startswith("| simple |")]
    assert len(tier_rows) == 3  # one per run
    assert "| tier | run | instances | EX | RS(0) |" in text  # there are unanswerable items


def test_breakdown_without_unanswerable_has_no_rs_column():
    s = summarize(
        [record("q1", "correct", tier="simple"), record("q2", "mismatch", tier="x")], resamples=50
    )
    text = render_report([s], meta=META)
    assert "| tier | run | instances | EX |" in text.splitlines()


def test_outcomes_table_marks_gold_error_excluded():
    s = summarize([record("q1", "correct"), record("q2", "gold_error")], resamples=50)
    text = render_report([s], meta=META)
    assert "| correct | 1 (1.000) |" in text
    assert "| gold_error | 1 (excluded) |" in text
    assert "| mismatch |" not in text  # classes nobody hit are left out


def test_comparison_section(comparison, runs):
    text = render_report(runs, comparison, meta=META)
    assert "## Paired comparison: model-a (A) vs model-b (B)" in text
    assert f"b = {comparison['b']}" in text and f"c = {comparison['c']}" in text
    assert f"p = {comparison['p_value']:.4f}" in text
    ex = comparison["scores"]["ex"]
    assert (
        f"| EX | {ex['a']:.3f} | {ex['b']:.3f} | {ex['diff']:.3f} "
        f"[{ex['ci'][0]:.3f}, {ex['ci'][1]:.3f}] |" in text
    )
    assert "Brittleness (EX of A minus EX of B" in text
    assert "| tier | n | b | c | p | EX A − B [95% CI] |" in text


def test_tiny_p_value_is_printed_as_a_bound():
    a = [record(f"q{i}", "correct") for i in range(30)]
    b = [record(f"q{i}", "mismatch") for i in range(30)]
    text = render_report([summarize(a, resamples=50)], compare_runs(a, b, resamples=50), meta=META)
    assert "exact McNemar p < 0.0001." in text


def test_unknown_formats_are_refused(runs, comparison):
    with pytest.raises(ValueError, match="summary format 'sqlgold.summary/9'"):
        render_report([{**runs[0], "format": "sqlgold.summary/9"}], meta=META)
    with pytest.raises(ValueError, match="comparison format None"):
        render_report(runs, {**comparison, "format": None}, meta=META)
    with pytest.raises(ValueError, match="at least one run"):
        render_report([], meta=META)


def test_runs_with_different_bootstrap_settings_are_refused():
    a = summarize(model_run("a"), resamples=50)
    b = summarize(model_run("b"), resamples=60)
    with pytest.raises(ValueError, match="different settings"):
        render_report([a, b], meta=META)


def test_negative_zero_is_not_printed():
    assert report._number(-0.0001, 3) == "0.000"
    assert report._number(-0.001, 3) == "-0.001"


def test_empty_run_renders():
    text = render_report([summarize([], resamples=50)], meta=META)
    assert "| EX | – |" in text


# --- schemas ------------------------------------------------------------------------


def test_summaries_validate_against_their_schema(runs):
    validator = schema("summary")
    cases = [
        *runs,
        summarize([], resamples=20),
        summarize(
            [record("q1", "gold_error"), record("q2", "correct", lf_match=True)],
            resamples=20,
            c_values=(0, 2.5),
        ),
    ]
    for s in cases:
        validator.validate(json.loads(json.dumps(s)))
    with_runner_keys = {**runs[0], "meta": {"profile": "sqlgold"}, "input_problems": []}
    validator.validate(with_runner_keys)


def test_summary_schema_pins_the_format_and_the_names_scripts_read(runs):
    validator = schema("summary")
    assert validator.schema["properties"]["format"]["const"] == SUMMARY_FORMAT
    bad = [
        {**runs[0], "format": "sqlgold.summary/1"},
        {k: v for k, v in runs[0].items() if k != "ex_ci"},
        {**runs[0], "rs": {"0": 1.0}},  # no RS(N)
        {**runs[0], "ex": 1.5},
        {**runs[0], "surprise": 1},
        {**runs[0], "by_tier": {"simple": {**runs[0]["by_tier"]["simple"], "extra": 1}}},
    ]
    for doc in bad:
        assert not validator.is_valid(doc)


def test_results_document_validates(runs):
    validator = schema("results")
    instances = [
        {
            **r,
            "output": "```sql\nSELECT 1\n```",
            "context": {"retrieved": ["case 1"]},
            "executed_sql": r["sql"],
            "timings": {"total_s": 0.01},
            "prediction_line": 3,
        }
        for r in model_run("model-a")
    ]
    doc = {
        "format": "sqlgold.results/2",
        "run": {"format": "sqlgold.run/1", "run": "model-a", "profile": "sqlgold"},
        "instances": instances,
        "summary": runs[0],
    }
    validator.validate(json.loads(json.dumps(doc)))
    bad_outcome = {**doc, "instances": [{**instances[0], "outcome": "right"}]}
    assert not validator.is_valid(bad_outcome)
    assert not validator.is_valid({**doc, "format": "sqlgold.results/1"})
    assert not validator.is_valid({**doc, "summary": {**runs[0], "format": "x"}})


def _run_with_inputs():
    """A run as the runner leaves it: failure reasons and lenient input problems added."""
    from score.statistics.metrics import failure_reasons

    recs = [
        record("q1", "correct", tier="simple"),
        record("q2", "render_error", tier="simple", reason='column "x" not found'),
        record("q3", "render_error", tier="compositional", reason='column "y" not found'),
        record("q4", "missing", tier="compositional"),
        record("q5", "missing", tier="schema_aware"),
        record("q6", "missing", tier="schema_aware"),
        record("q7", "missing", tier="schema_aware"),
        record("q8", "gold_drift", tier="simple", reason="hash a, pinned b"),
    ]
    s = summarize(recs, resamples=50)
    s["failure_reasons"] = failure_reasons(recs)
    s["input_problems"] = ["line 3: not JSON: Expecting value (column 1)", "line 9: unknown task"]
    return s


def test_report_warns_of_missing_instances_lenient_problems_and_drift():
    """The issue: report.md omitted --lenient input problems and did not warn when most
    instances were missing."""
    text = render_report([_run_with_inputs()], meta=META)
    assert "## Warnings" in text
    assert "**run: 4 of 8 instances have no prediction (missing).**" not in text  # not most
    s = _run_with_inputs()
    s["outcomes"]["counts"]["missing"] = 5
    text = render_report([s], meta=META)
    assert "**run: 5 of 8 instances have no prediction (missing).**" in text
    assert "**run: 2 prediction line(s) could not be used**" in text
    assert "  - line 3: not JSON: Expecting value (column 1)" in text
    assert "**run: 1 instances are gold_drift**" in text


def test_report_has_outcomes_by_tier_and_the_most_common_failure_reasons():
    text = render_report([_run_with_inputs()], meta=META)
    assert "## Outcomes by tier" in text
    assert "| tier | run | correct | render_error | gold_drift | missing |" in text
    assert "| schema_aware | run | 0 | 0 | 0 | 3 |" in text
    assert "## Most common failure reasons" in text
    assert '| 2 | render_error | column "…" not found |' in text


def test_a_version_1_summary_can_still_be_reported(runs):
    old = {**runs[0], "format": "sqlgold.summary/1"}
    assert "## Headline" in render_report([old], meta=META)
