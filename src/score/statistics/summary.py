"""A run's summary.json: every score with its bootstrap interval, overall and by group.

:func:`summarize` scores one run; :func:`summarize_runs` scores several runs of the same
instances at once (a scoring's run and its two priors, seed 004) and gives exactly what
:func:`summarize` gives for each.  The bootstrap draws depend only on the seed, the number
of resamples and the number of questions (:func:`score.statistics.stats.resample_counts`), so
runs whose scored records hold as many instances of each question share one set of draws
per group, their records taken in question order (:func:`score.statistics.stats.replicates`
sums several runs' components over them in one product).  Every component is 0 or 1, so
each replicate's sums are whole numbers, exact in floating point whatever the order of the
additions: the intervals are the same to the last bit as one run at a time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from score.scoring.outcomes import Outcome
from score.statistics.metrics import (
    BREAKDOWNS,
    Score,
    check_records,
    default_scores,
    group_by,
    is_scored,
    outcome_counts,
    outcome_rates,
    point_estimates,
    with_suite,
)
from score.statistics.stats import Bootstrap, interval, put, replicates, run_label

#: Format version of summary.json; readers refuse others.
SUMMARY_FORMAT = "sqlgold.summary/2"
#: Summary formats a report can still be written from (format 1 had no gold_drift).
SUMMARY_FORMATS_READ = frozenset({"sqlgold.summary/1", SUMMARY_FORMAT})


def summarize(
    records: Iterable[Mapping[str, Any]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    c_values: Sequence[float] = (0, 5, 10),
    prior: bool = False,
) -> dict[str, Any]:
    """The content of a run's summary.json: every score with its interval, overall and by
    tier, category, difficulty and language.

    A breakdown group is scored exactly as a run holding only its records would be (its
    own bootstrap under the same seed, RS(N) with its own N). ``prior`` marks an
    input-blind baseline run (seed 004) for the report.

    >>> from score.statistics.metrics import record
    >>> s = summarize([record("q1", "correct"), record("q2", "mismatch")], resamples=200)
    >>> s["ex"], s["rs"]["0"], s["by_tier"]["simple"]["n"]
    (0.5, 50.0, 2)
    """
    (summary,) = summarize_runs(
        [records],
        seed=seed,
        resamples=resamples,
        confidence=confidence,
        c_values=c_values,
        priors=[prior],
    )
    return summary


def summarize_runs(
    runs: Sequence[Iterable[Mapping[str, Any]]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    c_values: Sequence[float] = (0, 5, 10),
    priors: Sequence[bool] | None = None,
) -> list[dict[str, Any]]:
    """:func:`summarize` of each run of ``runs`` (``priors``: which are priors), with the
    bootstrap draws shared where the runs' questions are the same.

    >>> from score.statistics.metrics import record
    >>> a = [record("q1", "correct"), record("q2", "mismatch")]
    >>> b = [record("q1", "abstained"), record("q2", "abstained")]
    >>> both = summarize_runs([a, b], resamples=200, priors=[False, True])
    >>> both == [summarize(a, resamples=200), summarize(b, resamples=200, prior=True)]
    True
    """
    boot = Bootstrap(seed, resamples, confidence)
    checked = [check_records(records) for records in runs]
    flags = list(priors) if priors is not None else [False] * len(checked)
    if len(flags) != len(checked):
        raise ValueError(f"{len(flags)} prior flags for {len(checked)} runs")
    suites = [with_suite(recs) for recs in checked]
    summaries: list[dict[str, Any]] = [
        {"format": SUMMARY_FORMAT, "run": run_label(recs), "prior": bool(flag)}
        for recs, flag in zip(checked, flags, strict=True)
    ]
    for summary, recs, block in zip(
        summaries, checked, _score_blocks(checked, suites, c_values, boot), strict=True
    ):
        summary.update({"n_instances": len(recs), **block})
    for key, name in BREAKDOWNS.items():
        grouped = [group_by(recs, key) for recs in checked]
        found: list[dict[str, dict[str, Any]]] = [{} for _ in checked]
        for group in dict.fromkeys(g for groups in grouped for g in groups):
            having = [i for i, groups in enumerate(grouped) if group in groups]
            blocks = _score_blocks(
                [grouped[i][group] for i in having], [suites[i] for i in having], c_values, boot
            )
            for i, block in zip(having, blocks, strict=True):
                found[i][group] = block
        for summary, groups, blocks in zip(summaries, grouped, found, strict=True):
            summary[name] = {g: blocks[g] for g in groups}  # the run's own order of groups
    for summary in summaries:
        summary["bootstrap"] = boot.as_dict()
    return summaries


def _score_blocks(
    record_sets: Sequence[Sequence[Mapping[str, Any]]],
    suites: Sequence[bool],
    c_values: Sequence[float],
    boot: Bootstrap,
) -> list[dict[str, Any]]:
    """Counts, every score and its interval for each set of records (a run or a group).

    Sets whose scored records hold as many instances of each question (and score the same
    way: the same suite flag) are bootstrapped together, their records in question order
    (a replicate's sums do not depend on the order of the records)."""
    scored_sets = [[r for r in records if is_scored(r)] for records in record_sets]
    score_sets = [
        default_scores(c_values, n=len(scored), suite=suite)
        for scored, suite in zip(scored_sets, suites, strict=True)
    ]
    together: dict[tuple[Any, ...], list[int]] = {}
    for i, scored in enumerate(scored_sets):
        questions = tuple(sorted(r["task_id"] for r in scored))
        together.setdefault((suites[i], questions), []).append(i)
    reps: dict[int, dict[str, Any]] = {}
    for members in together.values():
        in_order = [sorted(scored_sets[i], key=_question) for i in members]
        drawn = replicates(in_order, score_sets[members[0]], boot)  # the members score alike
        reps.update(zip(members, drawn, strict=True))
    blocks = []
    for i, (records, scored) in enumerate(zip(record_sets, scored_sets, strict=True)):
        counts = outcome_counts(records)
        scores = score_sets[i]
        points = point_estimates(scored, scores)
        block: dict[str, Any] = {
            "n": len(scored),
            "n_questions": len({r["task_id"] for r in scored}),
            "n_answerable": sum(1 for r in scored if r["answerable"]),
            "n_unanswerable": sum(1 for r in scored if not r["answerable"]),
            "n_gold_error": counts[Outcome.GOLD_ERROR],
            "n_gold_drift": counts[Outcome.GOLD_DRIFT],
            "rs_n": len(scored),
        }
        for s in scores:
            value = points[s.name]
            put(block, s.path, value)
            ci = None if value is None else interval(reps[i][s.name], boot.confidence)
            put(block, ci_path(s), ci)
        block["outcomes"] = {"counts": counts, "rates": outcome_rates(counts)}
        blocks.append(block)
    return blocks


def ci_path(score: Score) -> tuple[str, ...]:
    """Where a score's interval sits in a summary: ``ex_ci``, ``rs_ci/5``."""
    return (score.path[0] + "_ci", *score.path[1:])


def _question(record: Mapping[str, Any]) -> str:
    return record["task_id"]
