"""Observation periods a query keeps only where they hold one day.

A person's observation periods never overlap (the CDM's conventions), so of the
periods that hold one given day a person has at most one.  A query that keeps a period
only if ``start <= d1 AND end >= d2`` with constant days ``d1 <= d2`` (or
``d BETWEEN start AND end``) keeps periods that all hold ``d1``: at most one per person.
:mod:`score.suite.row_guarantees` makes ``person_id`` a unique key of such periods.

>>> from sqlglot import parse_one
>>> where = parse_one("SELECT 1 FROM cdm.observation_period op WHERE "
...     "op.observation_period_start_date <= '2018-01-01' AND "
...     "op.observation_period_end_date >= '2018-12-31'").args["where"].this
>>> holds_one_day([where.this, where.expression], "op")
True
>>> holds_one_day([where.this], "op")
False
"""

from __future__ import annotations

from sqlglot import exp

_START, _END = "observation_period_start_date", "observation_period_end_date"


def holds_one_day(conditions: list[exp.Expr], alias: str) -> bool:
    """Whether the AND-ed ``conditions`` keep only periods of ``alias`` that hold one day
    (a constant upper bound on the start no later than a constant lower bound on the
    end)."""
    starts, ends = set(), set()
    for c in conditions:
        for column, day, side in _bounds(c, alias):
            if column == _START and side == "up":
                starts.add(day)
            elif column == _END and side == "down":
                ends.add(day)
    return any(a <= b for a in starts for b in ends)


def _bounds(condition: exp.Expr, alias: str) -> list[tuple[str, str, str]]:
    """(column of ``alias``, constant day, "up" or "down") for each bound ``condition``
    puts on a column of ``alias`` by a constant day: ``col <= d`` bounds it from above."""
    if isinstance(condition, exp.Between):
        low, high = condition.args.get("low"), condition.args.get("high")
        day = _day(condition.this)
        if day is None or not all(isinstance(c, exp.Column) for c in (low, high)):
            return []
        return [  # d BETWEEN start AND end: start <= d, end >= d
            (c.name, day, side) for c, side in ((low, "up"), (high, "down")) if c.table == alias
        ]
    ups = {exp.LTE: "up", exp.LT: "up", exp.GTE: "down", exp.GT: "down"}
    side = ups.get(type(condition))
    if side is None:
        return []
    this, other = condition.this, condition.expression
    if not isinstance(this, exp.Column):  # d >= col: col <= d
        this, other, side = other, this, "down" if side == "up" else "up"
    day = _day(other)
    if not isinstance(this, exp.Column) or this.table != alias or day is None:
        return []
    return [(this.name, day, side)]


def _day(node: exp.Expr | None) -> str | None:
    """The ISO day of a constant date (``'2018-01-01'``, ``DATE '2018-01-01'``, a CAST of
    one), else None; ISO days compare as strings."""
    while isinstance(node, (exp.Cast, exp.TsOrDsToDate)) and node.this is not None:
        node = node.this
    if isinstance(node, exp.Literal) and node.is_string:
        text = node.this
        if (
            len(text) == 10
            and text[4] == "-"
            and text[7] == "-"
            and text.replace("-", "").isdigit()
        ):
            return text
    return None
