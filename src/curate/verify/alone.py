"""Checking a gold with no reference answer, and an unanswerable record's claims.

``sqlgold verify`` on a record without ``answer_sql`` (or ``--gold`` without
``--answer``) checks what can be checked: the gold is transpiled and run as curation
would, its result shown, and an empty result flagged (curation drops it).  On an
unanswerable record it checks the claims that make it unanswerable: every table it
names is empty and every column it names is NULL in every row, on this database.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from curate.verify.gold import Drop, check_unanswerable
from curate.verify.pair import Side, ran_lines, reference_drop, reference_line, run_side, side_table
from score.comparison.order_matters import order_matters as gold_orders_rows
from score.execution.executor import Executor

if TYPE_CHECKING:
    from sqlglot import exp

    from curate.verify.concept_hints import ConceptHint


@dataclass(frozen=True)
class GoldCheck:
    """A gold checked on its own."""

    gold: Side
    hints: list[ConceptHint] = field(default_factory=list)
    drop: Drop | None = None  # the check the gold fails, as curation would drop it

    @property
    def ok(self) -> bool:
        """The gold ran, returned rows and meets every check curation applies."""
        ran = self.gold.result is not None and self.gold.result.num_rows > 0
        return ran and self.drop is None


def check_gold_alone(
    sql: str,
    dialect: str,
    executor: Executor,
    *,
    profile: str = "sqlgold",
    tree: exp.Expr | None = None,
) -> GoldCheck:
    """Run a gold with no reference answer and apply curation's checks to it (``tree``:
    the gold already read, as :func:`~curate.verify.pair.run_side` takes it)."""
    gold = run_side("gold", sql, dialect, executor, tree)
    order = gold_orders_rows(gold.sql) if gold.sql else False
    drop = reference_drop(gold, executor, order_matters=order, profile=profile)
    hints: list[ConceptHint] = []
    if gold.result is not None and gold.result.num_rows == 0 and gold.sql:
        from curate.verify.concept_hints import concept_hints

        hints = concept_hints(gold.sql, executor)
    return GoldCheck(gold, hints, drop)


def render_gold_alone(check: GoldCheck, *, rows: int = 5) -> str:
    lines = [*side_table(check.gold, rows), ""]
    side = check.gold
    lines += ran_lines(side)
    if side.rules:
        lines.append(f"gold transpile rules: {', '.join(side.rules)}")
    lines += [f"gold warning: {w}" for w in side.warnings]
    lines += reference_line(check.drop, side)
    if side.result is None:
        lines.append(f"verdict: the gold did not run ({side.error})")
    elif side.result.num_rows == 0:
        lines.append(
            "verdict: the gold is empty: curation drops it (rule min_rows), since any query "
            "that returns nothing would match it"
        )
    else:
        meets = "but fails a reference rule" if check.drop else "and meets the reference rules"
        lines.append(
            f"verdict: the gold runs ({side.result.num_rows} row(s)) {meets}; no reference "
            "answer to compare it with"
        )
    if check.hints:
        lines += ["", "the gold is empty; its concept ids on this database:"]
        lines += ["  " + h.render().replace("\n", "\n  ") for h in check.hints]
    return "\n".join(lines)


@dataclass(frozen=True)
class ClaimsCheck:
    """An unanswerable record's claims checked on the database."""

    empty_tables: tuple[str, ...]
    null_columns: tuple[str, ...]
    failure: str | None  # why a claim does not hold (None: every claim holds)
    declared: str | None = None  # the source's own declaration (not checked)

    @property
    def ok(self) -> bool:
        return self.failure is None


def check_claims(
    empty_tables: tuple[str, ...],
    null_columns: tuple[str, ...],
    executor: Executor,
    declared: str | None = None,
) -> ClaimsCheck:
    drop = check_unanswerable(empty_tables, null_columns, executor, declared)
    failure = None if drop is None else drop.reason
    return ClaimsCheck(empty_tables, null_columns, failure, declared)


def render_claims(check: ClaimsCheck) -> str:
    named = [f"cdm.{t} is empty" for t in check.empty_tables]
    named += [f"{c} is NULL in every row" for c in check.null_columns]
    lines = ["unanswerable record; its claims: " + ("; ".join(named) or "none")]
    if check.declared:
        lines.append(f"declared unanswerable by its source (not checked): {check.declared}")
    if check.ok:
        lines.append("verdict: every claim holds on this database: the answer is to abstain")
    else:
        lines.append(f"verdict: a claim does not hold: {check.failure}")
    return "\n".join(lines)
