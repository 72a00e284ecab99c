"""How sure the scores are: bootstrap intervals over questions, McNemar, paired differences.

The bootstrap resamples *questions* (``task_id``): every language version of a question
moves with it, so a question asked in Korean and English is one unit, not two.  Each
replicate sums the per-instance components of :mod:`score.statistics.metrics` over the drawn
questions, and every score is the same ratio of those sums as its point estimate.  The
interval is the percentile interval (NumPy's linear interpolation) of the replicates in
which the score is defined (a replicate that draws no unanswerable question has no
abstention share on unanswerable questions).

Randomness is explicit: ``numpy.random.RandomState(seed)`` (MT19937), whose stream NumPy
keeps frozen across versions and platforms (NEP 19), so a seed gives the same intervals
on every machine.  Questions are numbered in sorted ``task_id`` order, so the order of
the records does not matter either.  Resamples are drawn as an index matrix (resamples x
questions) turned into per-question counts, then multiplied by per-question sums.

Two runs are compared on the same instances: the discordant counts ``b`` (A right, B
wrong) and ``c`` (A wrong, B right) with an exact McNemar test, where *right* is the +1
of the reliability score (a right answer to an answerable question or an abstention on
an unanswerable one; on answerable questions alone, EX's notion of right), and the
difference of every score with a paired bootstrap interval that draws the same questions
for both runs.  McNemar treats each instance as an independent pair, as seed 000's
``compare_modes`` does; the bootstrap interval is the one that respects the questions.

>>> mcnemar_p(0, 0), round(mcnemar_p(10, 2), 4)
(1.0, 0.0386)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from score.statistics.metrics import (
    COMPONENTS,
    Score,
    check_records,
    components,
    default_scores,
    execution_accuracy,
    group_by,
    instance_id,
    is_right,
    is_scored,
    point_estimates,
    with_suite,
)

#: Format version of comparison.json; readers refuse others (summary.json's:
#: :mod:`score.statistics.summary`).
COMPARISON_FORMAT = "sqlgold.comparison/1"

GENERATOR = "numpy.random.RandomState (MT19937)"
RIGHT = (
    "reliability +1: a right answer to an answerable question or an abstention on an "
    "unanswerable one"
)

#: Index-matrix cells drawn at a time: bounds memory, not results.  Blocks of a few MiB
#: rather than tens: a summary of 2,001 records took 0.25 s with these, 0.31 s with 4M
#: cells (the allocator reuses a small block's memory; a large one is new pages each time).
_BLOCK_CELLS = 250_000


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Bootstrap:
    """The settings of a bootstrap, checked when built.

    >>> Bootstrap(seed=0).as_dict()["resamples"]
    2000
    >>> Bootstrap(seed=None)
    Traceback (most recent call last):
    ...
    ValueError: bootstrap seed must be an int in [0, 2**32), not None
    """

    seed: int
    resamples: int = 2000
    confidence: float = 0.95

    def __post_init__(self) -> None:
        if not _is_int(self.seed) or not 0 <= self.seed < 2**32:
            raise ValueError(f"bootstrap seed must be an int in [0, 2**32), not {self.seed!r}")
        if not _is_int(self.resamples) or self.resamples < 1:
            raise ValueError(f"bootstrap resamples must be an int >= 1, not {self.resamples!r}")
        if not isinstance(self.confidence, float) or not 0 < self.confidence < 1:
            raise ValueError(f"confidence must be a float in (0, 1), not {self.confidence!r}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "resamples": self.resamples,
            "confidence": self.confidence,
            "unit": "question (task_id); all its languages together",
            "interval": "percentile",
            "generator": GENERATOR,
        }


def question_index(records: Sequence[Mapping[str, Any]]) -> tuple[np.ndarray, int]:
    """The question number of each record (sorted task_id order) and the number of questions.

    >>> question_index([{"task_id": "b"}, {"task_id": "a"}, {"task_id": "b"}])
    (array([1, 0, 1]), 2)
    """
    ids = sorted({r["task_id"] for r in records})
    number = {t: i for i, t in enumerate(ids)}
    return np.array([number[r["task_id"]] for r in records], dtype=np.int64), len(ids)


def resample_counts(n_questions: int, boot: Bootstrap) -> Iterable[np.ndarray]:
    """How often each question is drawn in each resample, in blocks of rows.

    Row ``r`` of the concatenated blocks is resample ``r``: ``n_questions`` questions
    drawn with replacement by ``RandomState(seed)``; the block size does not change them.
    The draws depend on nothing else, so those of up to :data:`_KEPT_CELLS` cells are
    kept (read-only) for the next group of as many questions (a summary's groups often
    have the whole run's).

    >>> counts = np.vstack(list(resample_counts(3, Bootstrap(seed=0, resamples=4))))
    >>> counts.shape, counts.sum(axis=1).astype(int).tolist()
    ((4, 3), [3, 3, 3, 3])
    """
    if n_questions * boot.resamples <= _KEPT_CELLS:
        return _kept_counts(n_questions, boot.seed, boot.resamples)
    return _drawn_counts(n_questions, boot.seed, boot.resamples)


#: Draws kept for reuse only up to this many cells (32 MiB of floats).
_KEPT_CELLS = 4_000_000


@lru_cache(maxsize=8)
def _kept_counts(n_questions: int, seed: int, resamples: int) -> tuple[np.ndarray, ...]:
    blocks = tuple(_drawn_counts(n_questions, seed, resamples))
    for block in blocks:
        block.setflags(write=False)
    return blocks


def _drawn_counts(n_questions: int, seed: int, resamples: int) -> Iterable[np.ndarray]:
    rng = np.random.RandomState(seed)
    block = max(1, _BLOCK_CELLS // max(n_questions, 1))
    for start in range(0, resamples, block):
        rows = min(block, resamples - start)
        drawn = rng.randint(0, n_questions, size=(rows, n_questions))
        offsets = (np.arange(rows) * n_questions)[:, None]
        flat = np.bincount((drawn + offsets).ravel(), minlength=rows * n_questions)
        yield flat.reshape(rows, n_questions).astype(float)


def replicates(
    runs: Sequence[Sequence[Mapping[str, Any]]], scores: Sequence[Score], boot: Bootstrap
) -> list[dict[str, np.ndarray]]:
    """Each score's bootstrap replicates (one value per resample) for each run.

    The runs hold the same instances in the same order (one run, or two to pair), so
    every run is scored on the same drawn questions. With no records, every replicate
    is NaN.
    """
    order = [r["task_id"] for r in runs[0]]
    if any([r["task_id"] for r in recs] != order for recs in runs[1:]):
        raise ValueError("paired runs must list the same questions in the same order")
    clusters, n_q = question_index(runs[0])
    if n_q == 0:
        nan = np.full(boot.resamples, np.nan)
        return [{s.name: nan for s in scores} for _ in runs]
    per_question = np.column_stack(
        [
            np.bincount(clusters, weights=col, minlength=n_q)
            for recs in runs
            for col in components(recs).values()
        ]
    )  # questions x (runs * components), in COMPONENTS order within each run
    sums = np.vstack([counts @ per_question for counts in resample_counts(n_q, boot)])
    k = len(COMPONENTS)
    out = []
    for i in range(len(runs)):
        run_sums = dict(zip(COMPONENTS, sums[:, i * k : (i + 1) * k].T, strict=True))
        out.append({s.name: s.values(run_sums) for s in scores})
    return out


def interval(values: np.ndarray, confidence: float) -> list[float] | None:
    """The percentile interval of the defined (non-NaN) replicates; None if there are none.

    >>> interval(np.array([0.0, 1.0, np.nan, 0.5]), 0.5)
    [0.25, 0.75]
    """
    defined = values[~np.isnan(values)]
    if defined.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(defined, [tail, 100.0 - tail])
    return [float(low), float(high)]


def mcnemar_p(b: int, c: int) -> float:
    """Exact McNemar p-value: two-sided binomial test of ``b`` successes in ``b + c``
    trials at 0.5; 1.0 when there is no discordant pair.

    >>> mcnemar_p(3, 3)
    1.0
    """
    for count in (b, c):
        if not _is_int(count) or count < 0:
            raise ValueError(f"discordant counts must be ints >= 0, not {count!r}")
    if b + c == 0:
        return 1.0
    from scipy.stats import binomtest  # scipy.stats takes ~0.5 s to import: only here

    return float(binomtest(b, b + c, 0.5).pvalue)


def put(tree: dict[str, Any], path: Sequence[str], value: Any) -> None:
    """Set ``value`` at ``path`` in nested dicts, making the missing levels."""
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value


def _paired_block(
    recs_a: Sequence[Mapping[str, Any]],
    recs_b: Sequence[Mapping[str, Any]],
    scores: Sequence[Score],
    boot: Bootstrap,
) -> dict[str, Any]:
    """McNemar and the paired difference of every score on aligned scored instances."""
    b = sum(1 for x, y in zip(recs_a, recs_b, strict=True) if is_right(x) and not is_right(y))
    c = sum(1 for x, y in zip(recs_a, recs_b, strict=True) if not is_right(x) and is_right(y))
    point_a, point_b = point_estimates(recs_a, scores), point_estimates(recs_b, scores)
    reps_a, reps_b = replicates([recs_a, recs_b], scores, boot)
    block: dict[str, Any] = {
        "n": len(recs_a),
        "n_questions": len({r["task_id"] for r in recs_a}),
        "b": b,
        "c": c,
        "p_value": mcnemar_p(b, c),
        "scores": {},
    }
    for s in scores:
        a, bb = point_a[s.name], point_b[s.name]
        both = a is not None and bb is not None
        diff = a - bb if both else None
        ci = interval(reps_a[s.name] - reps_b[s.name], boot.confidence) if both else None
        put(block["scores"], s.path, {"a": a, "b": bb, "diff": diff, "ci": ci})
    return block


def align_instances(
    runs: Sequence[Sequence[Mapping[str, Any]]], names: Sequence[str]
) -> tuple[list[list[Mapping[str, Any]]], int]:
    """Every run's instances scored in every run, in instance-id order, and how many
    instances were left out (gold_error or gold_drift in some run).

    The runs must hold the same instances with the same ``answerable`` and ``tier``:
    else ValueError naming the run that differs from the first.

    >>> from score.statistics.metrics import record
    >>> align_instances([[record("q1", "correct")], [record("q2", "correct")]], ["x", "y"])
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: run y holds different instances from run x: 1 not in x [('q2', 'en')], ...
    """
    if len(runs) != len(names):
        raise ValueError(f"{len(names)} names for {len(runs)} runs")
    by_run = [{instance_id(r): r for r in check_records(records)} for records in runs]
    first = by_run[0]
    for name, run in zip(names[1:], by_run[1:], strict=True):
        extra, missing = sorted(run.keys() - first.keys()), sorted(first.keys() - run.keys())
        if extra or missing:
            raise ValueError(
                f"run {name} holds different instances from run {names[0]}: "
                f"{len(extra)} not in {names[0]} {extra[:5]}, {len(missing)} missing {missing[:5]}"
            )
        for iid in sorted(first):
            for key in ("answerable", "tier"):
                if first[iid][key] != run[iid][key]:
                    raise ValueError(
                        f"instance {iid}: {key} is {first[iid][key]!r} in run {names[0]}, "
                        f"{run[iid][key]!r} in run {name}"
                    )
    kept = [i for i in sorted(first) if all(is_scored(run[i]) for run in by_run)]
    return [[run[i] for i in kept] for run in by_run], len(first) - len(kept)


def pair_instances(
    records_a: Iterable[Mapping[str, Any]], records_b: Iterable[Mapping[str, Any]]
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]], int]:
    """The two runs' scored instances, aligned by instance id, and how many were dropped
    (:func:`align_instances` of runs A and B).
    """
    (a, b), dropped = align_instances([list(records_a), list(records_b)], ["A", "B"])
    return a, b, dropped


def run_label(records: Sequence[Mapping[str, Any]]) -> str | None:
    """The one run label of ``records`` (None if there are none); ValueError if several."""
    labels = sorted({r["run"] for r in records})
    if len(labels) > 1:
        raise ValueError(f"records of more than one run: {', '.join(map(repr, labels))}")
    return labels[0] if labels else None


def compare_runs(
    records_a: Iterable[Mapping[str, Any]],
    records_b: Iterable[Mapping[str, Any]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
    c_values: Sequence[float] = (0, 5, 10),
    brittleness: bool = False,
) -> dict[str, Any]:
    """The content of comparison.json: run A against run B on the same instances.

    ``b``/``c`` count A right and B wrong / A wrong and B right (right: :data:`RIGHT`),
    ``p_value`` is their exact McNemar test, and ``scores`` holds every score of A, of B,
    their difference A - B and its paired bootstrap interval, laid out as in a summary
    (``scores["rs"]["5"]["ci"]``); ``by_tier`` repeats it per tier. With ``brittleness``,
    A is the run with retrieved cases and B the run without, and ``brittleness`` is
    EX(A) - EX(B) with its interval (seed 003).

    >>> from score.statistics.metrics import record
    >>> a = [record("q1", "correct"), record("q2", "correct")]
    >>> b = [record("q1", "correct"), record("q2", "mismatch")]
    >>> cmp = compare_runs(a, b, resamples=100)
    >>> cmp["b"], cmp["c"], cmp["scores"]["ex"]["diff"]
    (1, 0, 0.5)
    """
    boot = Bootstrap(seed, resamples, confidence)
    recs_a, recs_b, dropped = pair_instances(records_a, records_b)
    suite = with_suite(recs_a) and with_suite(recs_b)
    scores = default_scores(c_values, n=len(recs_a), suite=suite)
    out: dict[str, Any] = {
        "format": COMPARISON_FORMAT,
        "run_a": run_label(recs_a),
        "run_b": run_label(recs_b),
        "right": RIGHT,
        "test": "exact McNemar: two-sided binomial test of b in b + c at 0.5",
        "n_gold_error_excluded": dropped,
        **_paired_block(recs_a, recs_b, scores, boot),
        "by_tier": {},
    }
    tiers_b = group_by(recs_b, "tier")
    for tier, group_a in group_by(recs_a, "tier").items():
        tier_scores = default_scores(c_values, n=len(group_a), suite=suite)
        out["by_tier"][tier] = _paired_block(group_a, tiers_b[tier], tier_scores, boot)
    if brittleness:
        out["brittleness"] = _brittleness(out["scores"]["ex"], recs_a)
    out["bootstrap"] = boot.as_dict()
    return out


def _brittleness(ex: Mapping[str, Any], records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Brittleness from the paired EX entry of a comparison (A with, B without cases)."""
    n = sum(1 for r in records if r["answerable"])
    return {"value": ex["diff"], "ci": ex["ci"], "n": n}


def brittleness(
    records: Iterable[Mapping[str, Any]],
    records_dropped: Iterable[Mapping[str, Any]],
    *,
    seed: int = 0,
    resamples: int = 2000,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """Seed 003's brittleness: EX of a run minus EX of the matching run whose retrieved
    cases were dropped, with its paired bootstrap interval.

    >>> from score.statistics.metrics import record
    >>> full = [record("q1", "correct"), record("q2", "correct")]
    >>> drop = [record("q1", "correct"), record("q2", "mismatch")]
    >>> brittleness(full, drop, resamples=100)["value"]
    0.5
    """
    boot = Bootstrap(seed, resamples, confidence)
    recs_a, recs_b, _ = pair_instances(records, records_dropped)
    ex = _paired_block(recs_a, recs_b, [execution_accuracy()], boot)["scores"]["ex"]
    return _brittleness(ex, recs_a)
