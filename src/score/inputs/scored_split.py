"""Which tasks a scoring run scores: the ``test`` split, the ``train`` split, or all.

The leakage-aware split (:mod:`score.inputs.split`) holds out ``test`` for evaluation; ``train``
tasks may be shown to a model (few-shot examples, the grounding examples document) and
are not evaluated.  A release (or a task file scored with ``--manifest``) carries its own
published split; for a plain task file the split is computed by
:func:`score.inputs.split.held_out_ids` with the same defaults ``sqlgold grounding`` and ``sqlgold
publish`` use (test fraction 0.5, seed 0), so the examples document never holds a task scored under
``test``.

>>> tasks = [{"id": f"q{i}", "tier": "simple"} for i in range(4)]
>>> s = select_split(tasks, None, "test")
>>> s.name, len(s.tasks), s.of, s.source
('test', 2, 4, 'computed (test fraction 0.5, seed 0)')
>>> select_split(tasks, {"train": ["q0"], "test": ["q1", "q2", "q3"]}, "train").ids
frozenset({'q0'})
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from score.errors import ScoringError
from score.inputs.split import held_out_ids

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
