"""score.report.chart: valid, deterministic SVG whose marks match the numbers."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

import score.report.chart as chart
from score.report.chart import PALETTE, PLOT_HEIGHT, render_chart
from score.statistics.metrics import record
from score.statistics.stats import compare_runs
from score.statistics.summary import summarize

SVG = "{http://www.w3.org/2000/svg}"


def run(name, outcomes, *, tiers=("simple", "schema_aware")):
    return [
        record(f"q{i}", o, tier=tiers[i % len(tiers)], run=name, language=lang)
        for i, o in enumerate(outcomes)
        for lang in ("en", "ko")
    ]


A = run("model <a> & co", ["correct", "correct", "mismatch", "correct"])
B = run("model-b", ["correct", "mismatch", "mismatch", "mismatch"])
PRIOR = [{**r, "outcome": "abstained", "run": "prior/abstain-all"} for r in A]


@pytest.fixture(scope="module")
def svg():
    runs = [
        summarize(A, resamples=200),
        summarize(PRIOR, resamples=200, prior=True),
        summarize(B, resamples=200),
    ]
    return render_chart(runs, compare_runs(A, B, resamples=200))


def parse(text):
    root = ET.fromstring(text)
    assert root.tag == f"{SVG}svg"
    return root


def by_class(root, cls):
    return [e for e in root.iter() if e.get("class") == cls]


def test_valid_and_deterministic(svg):
    root = parse(svg)
    width, height = float(root.get("width")), float(root.get("height"))
    assert root.get("viewBox") == f"0 0 {width:.1f} {height:.1f}"
    runs = [
        summarize(A, resamples=200),
        summarize(PRIOR, resamples=200, prior=True),
        summarize(B, resamples=200),
    ]
    assert render_chart(runs, compare_runs(A, B, resamples=200)) == svg


def test_one_bar_per_run_and_group_with_height_proportional_to_ex(svg):
    bars = by_class(parse(svg), "bar")
    assert len(bars) == 3 * 3  # groups all, simple, schema_aware x three runs
    heights = [float(b.get("height")) for b in bars[:3]]  # group "all": a, b, prior
    assert heights == pytest.approx([0.75 * PLOT_HEIGHT, 0.25 * PLOT_HEIGHT, 0.0], abs=0.06)


def test_models_in_palette_colours_priors_hatched(svg):
    fills = [b.get("fill") for b in by_class(parse(svg), "bar")[:3]]
    assert fills == [PALETTE[0], PALETTE[1], "url(#prior0)"]
    assert parse(svg).find(f".//{SVG}pattern[@id='prior0']") is not None


def test_error_bars_span_the_interval(svg):
    s = summarize(A, resamples=200)
    root = parse(svg)
    bar = by_class(root, "bar")[0]
    base = float(bar.get("y")) + float(bar.get("height"))
    d = by_class(root, "ci")[0].get("d")
    low_y, high_y = map(float, re.match(r"M[\d.]+ ([\d.]+)V([\d.]+)", d).groups())
    low, high = s["ex_ci"]
    assert low_y == pytest.approx(base - low * PLOT_HEIGHT, abs=0.06)
    assert high_y == pytest.approx(base - high * PLOT_HEIGHT, abs=0.06)
    assert low < high


def test_comparison_panel_shows_discordant_counts(svg):
    root = parse(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    cmp = compare_runs(A, B, resamples=200)
    assert "A right, B wrong (b)" in texts and "A wrong, B right (c)" in texts
    assert str(cmp["b"]) in texts and str(cmp["c"]) in texts
    assert f"exact McNemar p = {cmp['p_value']:.4f} on {cmp['n']} paired instances" in texts
    assert "A = model <a> & co" in texts  # escaped in the file, intact when parsed
    widths = [float(r.get("width")) for r in by_class(root, "discordant")]
    assert widths[0] > widths[1] == 0.0  # b = 4, c = 0


def test_no_text_runs_off_the_canvas(svg):
    root = parse(svg)
    width = float(root.get("width"))
    for t in root.iter(f"{SVG}text"):
        x, size = float(t.get("x")), float(t.get("font-size"))
        w = chart._text_width(t.text, size)
        start = {"start": x, "middle": x - w / 2, "end": x - w}[t.get("text-anchor")]
        assert 0 <= start and start + w <= width, t.text


def test_tiers_without_ex_are_left_out():
    recs = run("m", ["correct", "mismatch"]) + [
        record("u1", "abstained", answerable=False, tier="unanswerable", run="m")
    ]
    root = parse(render_chart([summarize(recs, resamples=50)]))
    labels = [t.text for t in root.iter(f"{SVG}text")]
    assert "simple" in labels and "unanswerable" not in labels


def test_empty_run_still_draws():
    root = parse(render_chart([summarize([], resamples=20)]))
    assert "no answerable instances" in [t.text for t in root.iter(f"{SVG}text")]
    assert by_class(root, "bar") == []


def test_too_many_priors_are_refused():
    priors = [summarize(PRIOR, resamples=20, prior=True) for _ in range(4)]
    with pytest.raises(ValueError, match="priors"):
        render_chart(priors)
