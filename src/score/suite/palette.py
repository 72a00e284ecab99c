"""A variant's palettes: the values each column may take in one candidate, and its NULL
share (:class:`Palette`), and the time of day of its datetimes (:func:`clock`).

A palette draws one to three values of a column's pool (:mod:`score.suite.value_pool`)
for the candidate, so GROUP BY, DISTINCT and joins collide; the gold a candidate is
aimed at leads with its constants (its *focus*, :mod:`score.suite.focus`).
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Mapping, Sequence
from typing import Any

from score.suite.value_pool import OWN

#: the share of a candidate's focus palettes that take the gold's own constant alone
SHARP = 0.25
#: the share of candidates aimed at a gold that returns no row on the base database
#: whose every focus palette is sharp (:attr:`Palette.exact`)
EXACT = 0.3
#: the share of the other focus palettes of a concept column that take only the concepts
#: the gold names (where it names several)
OWN_ONLY = 0.4
#: share of a row's datetimes at a time of day the gold aimed at names (else midnight)
CLOCKED = 0.7


class Palette:
    """The values each column may take in one variant, and its NULL share.

    ``focus`` holds the values one gold compares its columns with: where a column has
    some, the palette takes them all (and at most one base value), so the variant has
    rows on either side of that gold's every boundary."""

    def __init__(
        self,
        rng: random.Random,
        pools: Mapping[tuple[str, str], Sequence[Any]],
        focus: Mapping[tuple[str, str], Sequence[Any]] | None = None,
        exact: float = 0.0,
    ):
        self.rng = rng
        self.pools = pools
        self.focus = focus or {}
        self.chosen: dict[tuple[str, str], list[Any]] = {}
        self.nulls: dict[tuple[str, str], float] = {}
        #: now and then every palette the gold leads takes its own constant alone: the
        #: rows it asks for (a person's third test of a concept on a day) meet all of
        #: its filters at once, not each by a chance of its own
        self.exact = bool(self.focus) and exact > 0 and rng.random() < exact

    def values(self, table: str, column: str) -> list[Any]:
        key = (table, column)
        if key not in self.chosen:
            pool = list(self.pools.get(key) or [])
            focus = list(dict.fromkeys(self.focus.get(key) or []))
            own = list(self.focus.get((OWN + table, column)) or [])
            if focus and self.exact:
                self.chosen[key] = (own or focus)[:1]
                self.nulls[key] = 0.0
                return self.chosen[key]
            if len(focus) > 6 and column.endswith("concept_id"):
                # a family of concepts: a few of them, so rows collide
                focus = self.rng.sample(focus, self.rng.choice((2, 3, 4)))
            elif len(focus) > 6:  # many boundaries (dates of several years): most of them
                focus = self.rng.sample(focus, self.rng.choice((4, len(focus))))
            if focus and self.rng.random() < SHARP:
                # the gold's own constant alone: every row meets it (a person with exactly
                # the count a HAVING names, ties on the day a filter names)
                focus = focus[:1]
            elif own and self.rng.random() < OWN_ONLY:
                # the concepts the gold names, without their families: a person with
                # both of two it joins (a drug era overlapping another's) is common
                focus = own
            if focus:
                extra = self.rng.sample(pool, min(len(pool), self.rng.choice((0, 1))))
                self.chosen[key] = focus + [v for v in extra if v not in focus]
            else:
                k = min(len(pool), self.rng.choice((1, 2, 2, 3)))
                self.chosen[key] = self.rng.sample(pool, k) if pool else []
            self.nulls[key] = self.rng.choice((0.0, 0.0, 0.2, 0.5))
        return self.chosen[key]

    def widen(self, table: str, column: str, k: int) -> None:
        """At least ``k`` values for the column (as many as its pool has)."""
        values = self.values(table, column)
        more = [v for v in self.pools.get((table, column)) or [] if v not in values]
        values += more[: max(0, k - len(values))]

    def pick(self, table: str, column: str, required: bool) -> Any:
        values = self.values(table, column)
        if not values:
            return None
        if not required and self.rng.random() < self.nulls[(table, column)]:
            return None
        return self.rng.choice(values)


def clock(palette: Palette, table: str, column: str) -> dt.time:
    """The time of day of a row's datetime: midnight, or, where the gold aimed at compares
    the column with a time (or a timestamp), now and then one of those times."""
    times = [v for v in palette.focus.get((table, column)) or () if isinstance(v, dt.time)]
    if times and palette.rng.random() < CLOCKED:
        return palette.rng.choice(times)
    return dt.time(0)
