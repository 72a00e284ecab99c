"""score.statistics.summary: several runs summarized at once, exactly as one at a time."""

from __future__ import annotations

import json
import random

import pytest

import score.statistics.stats as stats
from score.statistics.metrics import record
from score.statistics.summary import summarize, summarize_runs


def run_of(outcomes, *, run, seed=0, gold_errors=()):
    """Questions q000.. in en and ko, tiers and categories by position, shuffled."""
    recs = []
    for i, outcome in enumerate(outcomes):
        for lang in ("en", "ko"):
            recs.append(
                record(
                    f"q{i:03d}",
                    "gold_error" if (i, lang) in gold_errors else outcome,
                    language=lang,
                    answerable=i % 4 != 0,
                    tier=("simple", "compositional", "schema_aware")[i % 3],
                    run=run,
                    category=("count", "list")[i % 2],
                )
            )
    random.Random(seed).shuffle(recs)
    return recs


def scored_run(n=60):
    rng = random.Random(11)
    return run_of(
        [rng.choice(["correct", "mismatch", "abstained", "cut_off"]) for _ in range(n)],
        run="model",
    )


def priors(n=60):
    return [
        run_of(["abstained"] * n, run="prior/abstain-all", seed=1),
        run_of(["mismatch"] * n, run="prior/select-0", seed=2),
    ]


def one_at_a_time(runs, flags, **kw):
    return [summarize(r, prior=f, **kw) for r, f in zip(runs, flags, strict=True)]


def test_a_run_and_its_priors_summarized_together_as_one_at_a_time():
    runs = [scored_run(), *priors()]
    flags = [False, True, True]
    together = summarize_runs(runs, resamples=500, priors=flags, seed=3)
    alone = one_at_a_time(runs, flags, resamples=500, seed=3)
    # the same to the last bit, and the same key order (what summary.json is written from)
    assert json.dumps(together) == json.dumps(alone)
    assert [s["prior"] for s in together] == flags
    assert together[1]["run"] == "prior/abstain-all"


def test_runs_with_other_questions_draw_their_own(monkeypatch):
    """A gold_error leaves a question with one scored instance fewer in one run: that run
    (and each group it changes) is bootstrapped alone, still as it would be by itself."""
    calls = []
    real = stats.resample_counts

    def counted(n_questions, boot):
        calls.append(n_questions)
        return real(n_questions, boot)

    monkeypatch.setattr(stats, "resample_counts", counted)
    broken = run_of(["correct", "mismatch"] * 30, run="broken", gold_errors={(4, "ko")})
    runs = [scored_run(), broken, *priors()]
    flags = [False, False, True, True]
    together = summarize_runs(runs, resamples=300, priors=flags)
    shared = len(calls)
    calls.clear()
    alone = one_at_a_time(runs, flags, resamples=300)
    assert json.dumps(together) == json.dumps(alone)
    # four runs drawn one at a time; together, three of them share every group's draws
    # and the fourth shares those of the groups its gold_error does not touch
    assert shared < len(calls) / 2


def test_groups_a_run_lacks_are_not_made_up():
    model = scored_run()
    only_simple = [r for r in priors()[0] if r["tier"] == "simple"]
    together = summarize_runs([model, only_simple], resamples=200)
    assert sorted(together[1]["by_tier"]) == ["simple"]
    assert json.dumps(together) == json.dumps(
        one_at_a_time([model, only_simple], [False, False], resamples=200)
    )


def test_flags_must_match_the_runs():
    with pytest.raises(ValueError, match="2 prior flags for 1 runs"):
        summarize_runs([scored_run()], priors=[False, True])
