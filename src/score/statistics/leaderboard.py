"""A leaderboard of two or more runs on the same instances: each run's EX and TS with
their bootstrap intervals and ranks, and every pair of runs tested with exact McNemar,
the p-values corrected for the number of pairs by Holm–Bonferroni.

Everything is a pure function of the runs' instance records (the content of
``leaderboard.json``; :mod:`score.report.leaderboard_markdown` and
:mod:`score.pages.leaderboard_page` show it).

* **Instances.** The runs must hold the same instances with the same ``answerable`` and
  ``tier`` (else ValueError naming the run).  An instance that is gold_error or
  gold_drift in any run is left out of every run (``n_gold_error_excluded``), so every
  score and test is on the same instances.
* **Scores.** EX is right on the base database over answerable instances; TS (test-suite
  accuracy) is right on the base database and every variant, for runs scored with a test
  suite (:mod:`score.statistics.metrics`).  TS is shown only when every run that has it
  was scored with the same suite; a run without one has no TS and no TS rank.
* **Intervals.** Percentile intervals of a bootstrap over questions (every language of a
  question moves with it; :mod:`score.statistics.stats`), one set of draws for all runs,
  so each pair's difference has a paired interval too.  Under the same seed and
  resamples, a run's interval is its summary's (same questions, same draws).
* **Ranks.** :data:`score.statistics.ranking.RANK_RULE`, under each score.
* **Pairwise tests.** For each pair (A above B in the table), ``b`` counts the answerable
  instances A got right and B wrong, ``c`` the reverse; ``p_value`` is the exact McNemar
  test of them.  The pairs of each score are one family: ``p_holm`` is the Holm-adjusted
  p-value and ``differs`` says whether it is at most :data:`ALPHA`.

>>> from score.statistics.metrics import record
>>> a = [record("q1", "correct", run="a"), record("q2", "correct", run="a")]
>>> b = [record("q1", "correct", run="b"), record("q2", "mismatch", run="b")]
>>> board = build_leaderboard([a, b], ["a", "b"], resamples=100)
>>> [(r["name"], r["ex"], r["ex_rank"]) for r in board["runs"]]
[('a', 1.0, 1), ('b', 0.5, 2)]
>>> pair = board["pairs"][0]
>>> pair["a"], pair["b"], pair["ex"]["b"], pair["ex"]["c"], pair["ex"]["p_holm"]
('a', 'b', 1, 0, 1.0)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.scoring.outcomes import Outcome
from score.statistics import metrics
from score.statistics.metrics import (
    base_correct,
    execution_accuracy,
    point_estimates,
    with_suite,
)
from score.statistics.multiple_testing import ALPHA, holm_adjusted
from score.statistics.ranking import RANK_RULE, competition_ranks
from score.statistics.stats import (
    Bootstrap,
    align_instances,
    interval,
    mcnemar_p,
    replicates,
    run_label,
)

#: Format version of leaderboard.json; readers refuse others.
LEADERBOARD_FORMAT = "sqlgold.leaderboard/1"

#: The scores a leaderboard ranks, in the order it shows them.
SCORES = ("ex", "ts")

SCORE_NAMES = {"ex": "EX", "ts": "TS"}

SCORE_TEXT = {
    "ex": "execution accuracy: right on the base database, over answerable instances",
    "ts": (
        "test-suite accuracy: right on the base database and on every variant of the "
        "runs' test suite, over answerable instances"
    ),
}

TEST = (
    "exact McNemar (two-sided binomial test of b in b + c at 0.5) on the answerable "
    "instances, right as the score counts it; b: A right and B wrong, c: A wrong and B "
    "right (A is the run listed first in the pair)"
)

CORRECTION = (
    "Holm–Bonferroni over the pairs of each score (one family per score): p_holm is the "
    f"adjusted p-value; differs: p_holm <= {ALPHA}, family-wise error rate {ALPHA}"
)


def run_names(paths: Sequence[str]) -> list[str]:
    """The name each run is shown by: its folder's name, a repeated name numbered by its
    place (``m (2)``), so every run has its own.

    >>> run_names(["runs/a", "other/a", "runs/b/"])
    ['a', 'a (2)', 'b']
    """
    names = []
    for i, path in enumerate(paths):
        name = path.rstrip("/").rsplit("/", 1)[-1] or path
        names.append(name if name not in names else f"{name} ({i + 1})")
    return names


def _right(score: str, rec: Mapping[str, Any]) -> bool:
    """Whether an answerable instance is right as ``score`` counts it."""
    return base_correct(rec) if score == "ex" else rec["outcome"] == Outcome.CORRECT


def discordant(
    score: str, recs_a: Sequence[Mapping[str, Any]], recs_b: Sequence[Mapping[str, Any]]
) -> tuple[int, int]:
    """(b, c) over the answerable instances of two aligned runs: A right and B wrong, A
    wrong and B right, right as ``score`` ("ex" or "ts") counts it.

    >>> from score.statistics.metrics import record
    >>> discordant("ex", [record("q", "correct")], [record("q", "mismatch")])
    (1, 0)
    """
    pairs = [(x, y) for x, y in zip(recs_a, recs_b, strict=True) if x["answerable"]]
    b = sum(1 for x, y in pairs if _right(score, x) and not _right(score, y))
    c = sum(1 for x, y in pairs if not _right(score, x) and _right(score, y))
    return b, c


def _suite_of(meta: Mapping[str, Any] | None) -> str | None:
    suite = (meta or {}).get("suite")
    return suite.get("manifest_sha256") if isinstance(suite, Mapping) else None


def build_leaderboard(
    runs: Sequence[Sequence[Mapping[str, Any]]],
    names: Sequence[str],
    *,
    metas: Sequence[Mapping[str, Any]] | None = None,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """The content of leaderboard.json for the runs' records (``names``: how each is
    shown; ``metas``: their run.json, which says which test suite scored each).

    Runs are listed by EX rank, then by name; pairs in that order (A above B).
    """
    if len(runs) < 2:
        raise ValueError(f"a leaderboard needs two or more runs, not {len(runs)}")
    boot = Bootstrap(seed, resamples, confidence)
    aligned, excluded = align_instances(runs, names)
    suites = [with_suite(recs) for recs in aligned]
    manifests = {_suite_of(m) for m, s in zip(metas or [{}] * len(runs), suites, strict=True) if s}
    ts_note = None
    if not any(suites):
        ts_note = "no run was scored with a test suite: TS is not reported"
    elif len(manifests) > 1:
        ts_note = "the runs were scored with different test suites: TS is not reported"
        suites = [False] * len(aligned)
    elif not all(suites):
        ts_note = "TS only for the runs scored with the test suite; the others have none"
    shown = ("ex", "ts") if any(suites) else ("ex",)
    scores = [execution_accuracy(), metrics.test_suite_accuracy()]  # not a name pytest collects
    reps = replicates(aligned, scores, boot)
    rows: list[dict[str, Any]] = []
    for i, (name, recs) in enumerate(zip(names, aligned, strict=True)):
        points = point_estimates(recs, scores)
        row: dict[str, Any] = {
            "name": name,
            "run": run_label(recs) if recs else None,
            "n_tasks": len({r["task_id"] for r in recs}),
            "n_instances": len(recs),
            "n_answerable": sum(1 for r in recs if r["answerable"]),
            "suite": suites[i],
        }
        for s in shown:
            value = points[s] if s == "ex" or suites[i] else None
            row[s] = value
            row[f"{s}_ci"] = None if value is None else interval(reps[i][s], boot.confidence)
        rows.append(row)
    for s in shown:
        for row, rank in zip(rows, competition_ranks([r[s] for r in rows]), strict=True):
            row[f"{s}_rank"] = rank
    order = sorted(
        range(len(rows)),
        key=lambda i: (rows[i]["ex_rank"] is None, rows[i]["ex_rank"] or 0, rows[i]["name"], i),
    )
    pairs: list[dict[str, Any]] = []
    for x, i in enumerate(order):
        for j in order[x + 1 :]:
            pair: dict[str, Any] = {"a": rows[i]["name"], "b": rows[j]["name"]}
            for s in shown:
                if rows[i][s] is None or rows[j][s] is None:
                    continue
                b, c = discordant(s, aligned[i], aligned[j])
                diff_reps = reps[i][s] - reps[j][s]
                pair[s] = {
                    "n": rows[i]["n_answerable"],
                    "b": b,
                    "c": c,
                    "p_value": mcnemar_p(b, c),
                    "diff": rows[i][s] - rows[j][s],
                    "diff_ci": interval(diff_reps, boot.confidence),
                }
            pairs.append(pair)
    for s in shown:
        tested = [p[s] for p in pairs if s in p]
        adjusted_p = holm_adjusted([t["p_value"] for t in tested])
        for test, adjusted in zip(tested, adjusted_p, strict=True):
            test["p_holm"] = adjusted
            test["differs"] = adjusted <= ALPHA
    return {
        "format": LEADERBOARD_FORMAT,
        "scores": {s: SCORE_TEXT[s] for s in shown},
        "ts_note": ts_note,
        "rank_rule": RANK_RULE,
        "test": TEST,
        "correction": CORRECTION,
        "alpha": ALPHA,
        "n_gold_error_excluded": excluded,
        "runs": [rows[i] for i in order],
        "pairs": pairs,
        "bootstrap": boot.as_dict(),
    }
