"""Distillation: which candidate variants a suite keeps, and what each one tells apart.

A neighbour that returns its gold's result on the base database is *alive*: execution
accuracy there would score it correct.  A candidate variant is kept only if it *kills*
some neighbour still alive (the neighbour's result differs from its gold's there, or the
neighbour fails where its gold runs), and only if every gold runs on it (a suite must not
fail a correct answer because its gold cannot run).  Pure bookkeeping: the runs are the
caller's (:mod:`score.suite.build`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

#: a neighbour: (task id, its index among the task's neighbours)
NeighbourKey = tuple[str, int]


@dataclass
class Distillation:
    """The neighbours still alive, the variants kept, and who killed whom."""

    alive: set[NeighbourKey]
    max_variants: int
    #: candidates aimed at a neighbour's task (or at none) it is tried on before it is
    #: left for a person to look at
    patience: int = 6
    tries: dict[NeighbourKey, int] = field(default_factory=dict)
    kept: list[str] = field(default_factory=list)
    killed_by: dict[NeighbourKey, str] = field(default_factory=dict)
    rejected: dict[str, str] = field(default_factory=dict)  # candidate -> why

    def wanted(self) -> list[NeighbourKey]:
        """The neighbours alive and not yet tried ``patience`` times, in order."""
        return sorted(k for k in self.alive if self.tries.get(k, 0) < self.patience)

    def tried(self, keys: Iterable[NeighbourKey]) -> None:
        for key in keys:
            self.tries[key] = self.tries.get(key, 0) + 1

    def done(self) -> bool:
        return not self.wanted() or len(self.kept) >= self.max_variants

    def tasks_alive(self) -> set[str]:
        return {task for task, _ in self.alive}

    def tasks_wanted(self) -> set[str]:
        return {task for task, _ in self.wanted()}

    def offer(self, candidate: str, killed: Iterable[NeighbourKey]) -> bool:
        """Keep ``candidate`` if it kills a neighbour still alive; True if kept."""
        fresh = sorted(set(killed) & self.alive)
        if not fresh:
            return False
        self.kept.append(candidate)
        for key in fresh:
            self.killed_by[key] = candidate
        self.alive -= set(fresh)
        return True

    def rename(self, candidate: str, name: str) -> None:
        """A kept candidate takes its variant's name."""
        self.kept = [name if k == candidate else k for k in self.kept]
        for key, by in self.killed_by.items():
            if by == candidate:
                self.killed_by[key] = name

    def reject(self, candidate: str, why: str) -> None:
        self.rejected[candidate] = why


def survival(executed: int, alive_on_base: int, alive_after: int) -> Mapping[str, float | int]:
    """Near-miss survival: the share of executed neighbours scored correct on the base
    database alone, and with the suite.

    >>> survival(200, 20, 1)["with_suite"]
    0.005
    """
    return {
        "executed": executed,
        "correct_on_base": alive_on_base,
        "correct_with_suite": alive_after,
        "base_only": alive_on_base / executed if executed else 0.0,
        "with_suite": alive_after / executed if executed else 0.0,
    }
