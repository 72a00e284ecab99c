"""The leakage-aware split: which tasks are held out for evaluation and which may be shown.

A task in ``test`` is evaluated; a task in ``train`` may appear in retrieval grounding
(``examples_document``) and few-shot prompts, and is never evaluated.  The split is

* **tier-stratified**: each tier is split on its own, so every tier keeps about the
  same share in ``test``;
* **deterministic everywhere**: within a tier, tasks are ranked by
  ``sha256(f"{seed}:{id}")`` (hex digest, ties impossible for distinct ids) and the
  first ``k`` in that order go to ``test``.  Neither Python's ``hash()`` nor set order
  is involved, so the same tasks and seed give the same split on any machine;
* **rounded half up, per tier**: ``k = floor(test_fraction * n + 1/2)`` computed in
  exact decimal arithmetic on ``str(test_fraction)`` (so ``0.5 * 5`` gives 3, not
  Python's banker's 2, and ``0.15 * 10`` gives 2 despite binary floats).  Because each
  tier rounds on its own, the total in ``test`` can differ from ``test_fraction * N``
  by up to half a task per tier;
* **stable under growth**: adding one task to a tier moves at most one existing task
  between the sides, since the relative rank of existing tasks never changes.

A scoring run scores one side (:func:`select_split`: ``test`` by default, ``train`` or
``all``); a release (or a task file scored with ``--manifest``) carries its own
published split, and a plain task file's is computed here with the defaults ``sqlgold
grounding`` and ``sqlgold publish`` use (test fraction 0.5, seed 0), so the examples
document never holds a task scored under ``test``.

``test_fraction=1.0`` puts every task in ``test`` (``train`` is empty);
``test_fraction=0.0`` puts every task in ``train``.  Within each side tasks keep their
input order.

>>> tasks = [{"id": f"q{i}", "tier": "simple"} for i in range(4)]
>>> s = split_tasks(tasks, test_fraction=0.5, seed=0)
>>> len(s["test"]), len(s["train"])
(2, 2)
>>> sorted(t["id"] for t in s["test"]) == sorted(t["id"] for t in split_tasks(tasks)["test"])
True
>>> [len(split_tasks(tasks, test_fraction=1.0)[k]) for k in ("train", "test")]
[0, 4]
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cached_property
from typing import Any

from score.errors import ScoringError, SqlgoldError

STAGE = "split"
SPLITS: tuple[str, str] = ("train", "test")


def rank_key(task_id: str, seed: int) -> str:
    """The sort key that orders tasks within a tier: ``sha256(f"{seed}:{id}")``.

    The seed is an integer, so the first ``:`` separates it from the id unambiguously.

    >>> rank_key("q1", 0)[:16]
    'cd933bd0bb0f0014'
    """
    return hashlib.sha256(f"{seed}:{task_id}".encode()).hexdigest()


def count_for_test(n: int, test_fraction: float) -> int:
    """How many of ``n`` tasks of one tier go to ``test``: ``test_fraction * n``
    rounded half up, in exact decimal arithmetic.

    >>> [count_for_test(n, 0.5) for n in range(6)]
    [0, 1, 1, 2, 2, 3]
    >>> count_for_test(10, 0.15), count_for_test(7, 1.0), count_for_test(7, 0.0)
    (2, 7, 0)
    """
    exact = Decimal(str(test_fraction)) * n
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def check_fraction(test_fraction: float) -> None:
    """Refuse a test fraction outside [0, 1] (or not a number).

    >>> check_fraction(0.5)
    >>> check_fraction(1.5)
    Traceback (most recent call last):
    ...
    score.errors.SqlgoldError: [split] test fraction must be between 0 and 1, got 1.5
    """
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, int | float):
        raise SqlgoldError(f"test fraction must be a number, got {test_fraction!r}", stage=STAGE)
    if not 0.0 <= test_fraction <= 1.0:
        raise SqlgoldError(
            f"test fraction must be between 0 and 1, got {test_fraction}", stage=STAGE
        )


def held_out_ids(
    tasks: Sequence[Mapping[str, Any]], test_fraction: float = 0.5, seed: int = 0
) -> frozenset[str]:
    """The ids of the tasks that :func:`split_tasks` puts in ``test``.

    >>> tasks = [{"id": "a", "tier": "simple"}, {"id": "b", "tier": "unanswerable"}]
    >>> sorted(held_out_ids(tasks, 1.0))
    ['a', 'b']
    """
    check_fraction(test_fraction)
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise SqlgoldError(f"seed must be an integer, got {seed!r}", stage=STAGE)
    by_tier: dict[str, list[str]] = {}
    seen: set[str] = set()
    for task in tasks:
        task_id, tier = task.get("id"), task.get("tier")
        if not isinstance(task_id, str) or not task_id:
            raise SqlgoldError("a task has no id", stage=STAGE)
        if not isinstance(tier, str) or not tier:
            raise SqlgoldError("task has no tier", stage=STAGE, task_id=task_id)
        if task_id in seen:
            raise SqlgoldError("duplicate task id", stage=STAGE, task_id=task_id)
        seen.add(task_id)
        by_tier.setdefault(tier, []).append(task_id)
    chosen: set[str] = set()
    for ids in by_tier.values():
        ranked = sorted(ids, key=lambda i: rank_key(i, seed))
        chosen.update(ranked[: count_for_test(len(ids), test_fraction)])
    return frozenset(chosen)


def split_tasks(
    tasks: Sequence[Mapping[str, Any]], test_fraction: float = 0.5, seed: int = 0
) -> dict[str, list]:
    """Split tasks into ``{"train": [...], "test": [...]}`` (see the module docstring).

    The task objects themselves are returned, in input order on each side.

    >>> tasks = [{"id": "a", "tier": "simple"}, {"id": "b", "tier": "simple"},
    ...          {"id": "c", "tier": "schema_aware"}]
    >>> s = split_tasks(tasks, test_fraction=0.5, seed=0)
    >>> sorted(len(v) for v in s.values())
    [1, 2]
    >>> split_tasks(tasks, test_fraction=0.0)["test"]
    []
    """
    chosen = held_out_ids(tasks, test_fraction, seed)
    return {
        "train": [t for t in tasks if t["id"] not in chosen],
        "test": [t for t in tasks if t["id"] in chosen],
    }


SPLIT_CHOICES = ("test", "train", "all")
DEFAULT_TEST_FRACTION = 0.5
DEFAULT_SEED = 0


@dataclass(frozen=True)
class ScoredSplit:
    """The tasks of one split, and where the split came from."""

    name: str
    tasks: list[dict[str, Any]]
    of: int  # tasks in the whole set
    source: str | None  # "release", "computed (...)", or None for all
    test_fraction: float | None = None
    seed: int | None = None

    @cached_property
    def ids(self) -> frozenset[str]:
        """The split's task ids, made once (the runner asks for each prediction)."""
        return frozenset(t["id"] for t in self.tasks)

    def describe(self) -> str:
        """One line for the run summary, e.g. ``test (139 of 277 tasks; computed ...)``."""
        where = f"; {self.source}" if self.source else ""
        return f"{self.name} ({len(self.tasks)} of {self.of} tasks{where})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "source": self.source,
            "tasks": len(self.tasks),
            "of": self.of,
            "test_fraction": self.test_fraction,
            "seed": self.seed,
        }


def select_split(
    tasks: Sequence[dict[str, Any]],
    published: Mapping[str, Sequence[str]] | None,
    name: str,
    *,
    test_fraction: float | None = None,
    seed: int | None = None,
) -> ScoredSplit:
    """The tasks of split ``name`` (``train``, ``test`` or ``all``), in their order.

    ``published`` is the release's split (name -> ids), which is used when given; a
    ``test_fraction`` or ``seed`` that would compute another split is then refused.

    >>> tasks = [{"id": f"q{i}", "tier": "simple"} for i in range(4)]
    >>> s = select_split(tasks, None, "test")
    >>> s.name, len(s.tasks), s.of, s.source
    ('test', 2, 4, 'computed (test fraction 0.5, seed 0)')
    >>> select_split(tasks, {"train": ["q0"], "test": ["q1", "q2", "q3"]}, "train").ids
    frozenset({'q0'})
    """
    if name not in SPLIT_CHOICES:
        raise ScoringError(f"unknown split {name!r} (one of {', '.join(SPLIT_CHOICES)})")
    tasks = list(tasks)
    if name == "all":
        return ScoredSplit(name, tasks, len(tasks), None)
    if published is not None:
        if test_fraction is not None or seed is not None:
            raise ScoringError(
                "the release fixes its own split: leave out --test-fraction and --split-seed"
            )
        chosen = set(published.get(name, []))
        source, fraction, split_seed = "the release's published split", None, None
    else:
        fraction = DEFAULT_TEST_FRACTION if test_fraction is None else test_fraction
        split_seed = DEFAULT_SEED if seed is None else seed
        test = held_out_ids(tasks, fraction, split_seed)
        every = {t["id"] for t in tasks}
        chosen = set(test) if name == "test" else every - test
        source = f"computed (test fraction {fraction:g}, seed {split_seed})"
    selected = [t for t in tasks if t["id"] in chosen]
    if not selected:
        raise ScoringError(
            f"the {name} split holds no task ({source}); choose another with --split"
        )
    return ScoredSplit(name, selected, len(tasks), source, fraction, split_seed)
