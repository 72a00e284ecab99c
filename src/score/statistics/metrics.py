"""The scores of one run: pure functions of its instance records.

An instance record is one scored (question, language) pair, as the runner writes it:
``task_id``, ``language``, ``run``, ``tier``, ``category``, ``difficulty``,
``answerable``, ``outcome`` (one of :data:`score.scoring.outcomes.OUTCOMES`), ``reason``,
``sql`` and ``lf_match``; other keys pass through untouched.

Every score is a ratio of sums of per-instance *components* (0/1 columns such as
``correct`` or ``answerable``), so one definition gives both the point estimate and
each bootstrap replicate (:mod:`score.statistics.stats` sums the same components over resampled
questions). A ``gold_error`` or ``gold_drift`` instance has every component 0: it is in
no rate and no denominator. A ``missing`` instance counts as a wrong answer.

>>> recs = [record("q1", "correct"), record("q2", "mismatch"), record("q3", "gold_error")]
>>> point_estimates(recs, default_scores(n=2))["ex"]
0.5
>>> [item_score(r) for r in recs]
[1, -1, None]
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from score.scoring.outcomes import EXCLUDED, FAILED_ANSWERS, OUTCOMES, Outcome

#: Keys every instance record must carry (others pass through).
RECORD_KEYS: tuple[str, ...] = (
    "task_id",
    "language",
    "run",
    "tier",
    "category",
    "difficulty",
    "answerable",
    "outcome",
    "reason",
    "sql",
    "lf_match",
)

#: The breakdowns of a summary: record key -> summary key.
BREAKDOWNS: dict[str, str] = {
    "tier": "by_tier",
    "category": "by_category",
    "difficulty": "by_difficulty",
    "language": "by_language",
}

#: Tiers listed in this order first; any other tier follows alphabetically.
TIER_ORDER: tuple[str, ...] = ("simple", "compositional", "schema_aware", "unanswerable")

#: The group name of records whose breakdown key is None.
NO_GROUP = "(none)"


_NO_SQL = (Outcome.ABSTAINED, Outcome.CUT_OFF, Outcome.FORMAT_FAILURE, Outcome.MISSING)


def record(
    task_id: str,
    outcome: str,
    *,
    language: str = "en",
    answerable: bool = True,
    tier: str = "simple",
    run: str = "run",
    lf_match: bool | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A minimal instance record (for tests and docstring examples).

    >>> record("q1", "abstained", answerable=False)["answerable"]
    False
    """
    rec: dict[str, Any] = {
        "task_id": task_id,
        "language": language,
        "run": run,
        "tier": tier,
        "category": None,
        "difficulty": None,
        "answerable": answerable,
        "outcome": outcome,
        "reason": "",
        "sql": None if outcome in _NO_SQL else "SELECT 1",
        "lf_match": lf_match,
    }
    rec.update(extra)
    return rec


def check_records(records: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The records as a list, after checking each one; raises ValueError naming the bad one.

    Checks: every key of :data:`RECORD_KEYS` is present, the outcome is known,
    ``answerable`` is a bool, ``lf_match`` is a bool or None, and no instance
    ``(task_id, language)`` occurs twice.

    >>> check_records([record("q1", "right")])
    Traceback (most recent call last):
    ...
    ValueError: instance ('q1', 'en'): unknown outcome 'right'
    """
    checked: list[Mapping[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for rec in records:
        iid = (rec.get("task_id"), rec.get("language"))
        missing = [k for k in RECORD_KEYS if k not in rec]
        if missing:
            raise ValueError(f"instance {iid}: record lacks {', '.join(missing)}")
        if not isinstance(rec["task_id"], str) or not isinstance(rec["language"], str):
            raise ValueError(f"instance {iid}: task_id and language must be strings")
        if rec["outcome"] not in OUTCOMES:
            raise ValueError(f"instance {iid}: unknown outcome {rec['outcome']!r}")
        if not isinstance(rec["answerable"], bool):
            raise ValueError(
                f"instance {iid}: answerable must be a bool, not {rec['answerable']!r}"
            )
        if rec["lf_match"] is not None and not isinstance(rec["lf_match"], bool):
            raise ValueError(f"instance {iid}: lf_match must be a bool or None")
        if iid in seen:
            raise ValueError(f"instance {iid} occurs twice")
        seen.add(iid)
        checked.append(rec)
    return checked


def instance_id(rec: Mapping[str, Any]) -> tuple[str, str]:
    """The id of an instance: ``(task_id, language)``."""
    return (rec["task_id"], rec["language"])


def is_scored(rec: Mapping[str, Any]) -> bool:
    """False for a gold_error or gold_drift instance, which no rate or denominator counts."""
    return rec["outcome"] not in EXCLUDED


def item_score(rec: Mapping[str, Any]) -> int | None:
    """The EHRSQL 2024 reliability item of one instance: +1, 0 or -1 (None for gold_error).

    +1 for a right answer to an answerable question and for an abstention on an
    unanswerable one; 0 for an abstention on an answerable one; -1 (the -c of RS(c))
    for anything else, a missing, cut-off or format-failed answer included.

    >>> item_score(record("q", "abstained", answerable=False)), item_score(record("q", "missing"))
    (1, -1)
    """
    if not is_scored(rec):
        return None
    abstained = rec["outcome"] == Outcome.ABSTAINED
    if rec["answerable"]:
        return 1 if rec["outcome"] == Outcome.CORRECT else 0 if abstained else -1
    return 1 if abstained else -1


def is_right(rec: Mapping[str, Any]) -> bool:
    """Whether an instance earns the +1 of the reliability score (the McNemar 'right')."""
    return item_score(rec) == 1


#: The per-instance columns scores are built from (see :func:`components`).
COMPONENTS: tuple[str, ...] = (
    "scored",
    "answerable",
    "unanswerable",
    "correct",
    "base_correct",
    "plus",
    "minus",
    "abstained_answerable",
    "abstained_unanswerable",
    "cut_off",
    "format_failure",
    "lf_known",
    "lf",
)


def components(records: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """The per-instance 0/1 columns every score is built from, one entry per record.

    >>> components([record("q1", "correct"), record("q2", "gold_error")])["answerable"]
    array([1., 0.])
    """
    rows = np.array([component_row(rec) for rec in records], dtype=float)
    columns = np.ascontiguousarray(rows.reshape(len(records), len(COMPONENTS)).T)
    return dict(zip(COMPONENTS, columns, strict=True))


def component_row(rec: Mapping[str, Any]) -> tuple[bool, ...]:
    """One record's :data:`COMPONENTS`, in that order (a tuple, not a dict: a summary
    builds these for every record of every group twice).

    >>> component_row(record("q1", "abstained", answerable=False))[:4]
    (True, False, True, False)
    """
    outcome = rec["outcome"]
    scored = is_scored(rec)
    answerable = scored and rec["answerable"]
    unanswerable = scored and not rec["answerable"]
    abstained = outcome == Outcome.ABSTAINED
    item = item_score(rec)
    return (
        scored,
        answerable,
        unanswerable,
        answerable and outcome == Outcome.CORRECT,
        answerable and base_correct(rec),
        item == 1,
        item == -1,
        answerable and abstained,
        unanswerable and abstained,
        scored and outcome == Outcome.CUT_OFF,
        scored and outcome == Outcome.FORMAT_FAILURE,
        answerable and rec["lf_match"] is not None,
        answerable and rec["lf_match"] is True,
    )


@dataclass(frozen=True)
class Score:
    """``scale * sum(weight * component) / sum(denominator)``, undefined (NaN) when the
    denominator sums to 0 or, with ``requires``, when that component sums to 0.

    ``path`` is where the score sits in a summary: ``("rs", "5")`` is ``summary["rs"]["5"]``
    and its interval ``summary["rs_ci"]["5"]``.
    """

    name: str
    path: tuple[str, ...]
    terms: tuple[tuple[str, float], ...]
    denominator: str
    scale: float = 1.0
    requires: str | None = None

    def __post_init__(self) -> None:
        for comp in [c for c, _ in self.terms] + [self.denominator, self.requires]:
            if comp is not None and comp not in COMPONENTS:
                raise ValueError(f"score {self.name}: unknown component {comp!r}")

    def values(self, sums: Mapping[str, np.ndarray]) -> np.ndarray:
        """The score of each replicate, given each component's sums (arrays of one shape)."""
        den = np.asarray(sums[self.denominator], dtype=float)
        num = np.zeros_like(den)
        for comp, weight in self.terms:
            num = num + weight * np.asarray(sums[comp], dtype=float)
        defined = den > 0
        if self.requires is not None:
            defined &= np.asarray(sums[self.requires]) > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(defined, self.scale * num / np.where(defined, den, 1.0), np.nan)

    def value(self, sums: Mapping[str, float]) -> float | None:
        """The score of one set of sums, None where it is undefined."""
        v = float(self.values({k: np.asarray(s) for k, s in sums.items()}))
        return None if math.isnan(v) else v


def base_correct(rec: Mapping[str, Any]) -> bool:
    """Whether an instance is right on the base database: its ``base_correct`` when
    scored with a test suite (its ``outcome`` is then the suite's verdict), else its
    outcome.

    >>> base_correct(record("q", "mismatch", base_correct=True))
    True
    """
    if rec.get("base_correct") is not None:
        return bool(rec["base_correct"])
    return rec["outcome"] == Outcome.CORRECT


def with_suite(records: Iterable[Mapping[str, Any]]) -> bool:
    """Whether the records were scored with a test suite (they carry its verdicts)."""
    return any(rec.get("suite") is not None for rec in records)


def execution_accuracy() -> Score:
    """EX: right answers on the base database over answerable instances (an abstention or
    a missing answer is wrong)."""
    return Score("ex", ("ex",), (("base_correct", 1.0),), "answerable")


def test_suite_accuracy() -> Score:
    """TS: answers right on the base database and on every variant of a test suite, over
    answerable instances (Zhong, Yu and Klein, 2020)."""
    return Score("ts", ("ts",), (("correct", 1.0),), "answerable")


def reliability(c: float, key: str | None = None) -> Score:
    """RS(c) of EHRSQL 2024, x100: the mean item score with -1 replaced by -c.

    ``key`` names it in the summary (default ``f"{c:g}"``; RS(N) uses ``"N"``).

    >>> rs = reliability(5)
    >>> round(rs.value({"plus": 2, "minus": 3, "scored": 6}), 2)
    -216.67
    """
    if isinstance(c, bool) or not isinstance(c, int | float) or not math.isfinite(c) or c < 0:
        raise ValueError(f"reliability penalty must be a finite number >= 0, not {c!r}")
    key = f"{c:g}" if key is None else key
    return Score(f"rs_{key}", ("rs", key), (("plus", 1.0), ("minus", -float(c))), "scored", 100.0)


def share(name: str, path: tuple[str, ...], component: str, of: str) -> Score:
    """The share of ``of`` instances that are ``component`` instances."""
    return Score(name, path, ((component, 1.0),), of)


def default_scores(
    c_values: Sequence[float] = (0, 5, 10), *, n: int, suite: bool = False
) -> list[Score]:
    """Every score of a summary: EX, RS(c) for each c and for N = ``n``, abstention
    shares, cut-off and format-failure rates, and logical-form accuracy; with ``suite``,
    TS too (RS and the shares then follow the suite's verdicts, EX the base database's).

    LF is the share of ``lf_match`` True over answerable instances; it is undefined
    when no answerable instance carries an ``lf_match`` (the runner did not compare).

    >>> [s.name for s in default_scores((0,), n=4)][:3]
    ['ex', 'rs_0', 'rs_N']
    """
    keys = [f"{c:g}" for c in c_values]
    if len(set(keys)) != len(keys) or "N" in keys:
        raise ValueError(f"reliability penalties must be distinct, not {tuple(c_values)!r}")
    return [
        execution_accuracy(),
        *(reliability(c) for c in c_values),
        reliability(n, key="N"),
        share(
            "abstention_answerable",
            ("abstention", "answerable"),
            "abstained_answerable",
            "answerable",
        ),
        share(
            "abstention_unanswerable",
            ("abstention", "unanswerable"),
            "abstained_unanswerable",
            "unanswerable",
        ),
        share("cut_off_rate", ("cut_off_rate",), "cut_off", "scored"),
        share("format_failure_rate", ("format_failure_rate",), "format_failure", "scored"),
        Score("lf", ("lf",), (("lf", 1.0),), "answerable", requires="lf_known"),
        *([test_suite_accuracy()] if suite else []),
    ]


def point_estimates(
    records: Sequence[Mapping[str, Any]], scores: Sequence[Score]
) -> dict[str, float | None]:
    """Each score of the records, by name (None where undefined, e.g. EX with no answerable)."""
    sums = {name: float(col.sum()) for name, col in components(records).items()}
    return {s.name: s.value(sums) for s in scores}


def outcome_counts(records: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many instances fall in each outcome class (every class listed, gold_error too).

    >>> outcome_counts([record("q1", "correct")])["correct"]
    1
    """
    counts = dict.fromkeys(OUTCOMES, 0)
    for rec in records:
        counts[rec["outcome"]] += 1
    return counts


def outcome_rates(counts: Mapping[str, int]) -> dict[str, float | None]:
    """Each outcome's share of the scored instances (gold_error and gold_drift are not
    rates: excluded).

    >>> outcome_rates({"correct": 1, "mismatch": 3, "gold_error": 2})["correct"]
    0.25
    """
    scored = sum(n for o, n in counts.items() if o not in EXCLUDED)
    return {o: (n / scored if scored else None) for o, n in counts.items() if o not in EXCLUDED}


def group_by(records: Iterable[Mapping[str, Any]], key: str) -> dict[str, list[Mapping[str, Any]]]:
    """The records split by the value of ``key`` (None goes to :data:`NO_GROUP`), in a
    fixed order: known tiers first, then the other names sorted.

    >>> list(group_by([record("a", "correct", tier="x"), record("b", "correct")], "tier"))
    ['simple', 'x']
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for rec in records:
        value = rec[key]
        groups.setdefault(NO_GROUP if value is None else str(value), []).append(rec)
    return {name: groups[name] for name in sorted(groups, key=group_order)}


#: Difficulty levels from easiest, as a breakdown lists them (not alphabetically).
DIFFICULTY_ORDER = ("easy", "medium", "hard")


def group_order(name: str) -> tuple[int, str]:
    """Sort key of a group name: the known tiers in :data:`TIER_ORDER`, the difficulty
    levels in :data:`DIFFICULTY_ORDER`, then by name.

    >>> sorted(["hard", "easy", "medium", "simple"], key=group_order)
    ['simple', 'easy', 'medium', 'hard']
    """
    known = (*TIER_ORDER, *DIFFICULTY_ORDER)
    return (known.index(name), "") if name in known else (len(known), name)


_NUMBER = re.compile(r"\d+(\.\d+)?")
_QUOTED = re.compile(r'"[^"]*"')


def reason_pattern(reason: str) -> str:
    """A failure reason with its particulars (numbers, quoted names) blanked, so reasons
    that differ only in them count together.

    >>> reason_pattern('Binder Error: Referenced column "foo" not found; 12 rows')
    'Binder Error: Referenced column "…" not found; # rows'
    """
    return _NUMBER.sub("#", _QUOTED.sub('"…"', reason))


def failure_reasons(records: Iterable[Mapping[str, Any]], top: int = 10) -> list[dict[str, Any]]:
    """The most common reasons of answers that failed (missing ones aside), most frequent
    first: ``{"outcome", "reason", "count"}`` with :func:`reason_pattern` reasons.

    >>> recs = [record("a", "mismatch", reason="2 rows, gold 3"),
    ...         record("b", "mismatch", reason="4 rows, gold 5"), record("c", "correct")]
    >>> failure_reasons(recs)
    [{'outcome': 'mismatch', 'reason': '# rows, gold #', 'count': 2}]
    """
    counts: Counter[tuple[str, str]] = Counter(
        (rec["outcome"], reason_pattern(str(rec.get("reason") or "")))
        for rec in records
        if rec["outcome"] in FAILED_ANSWERS and rec["outcome"] != Outcome.MISSING
    )
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return [{"outcome": o, "reason": r, "count": n} for (o, r), n in ranked[:top]]
