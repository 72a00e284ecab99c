"""A gold / answer pair checked on a test suite's variants too (``sqlgold verify --suite``).

After the base database's comparison (:mod:`curate.verify.pair`), both queries run on
each variant in the suite's order, one variant's database open at a time, under the
same comparator profile and order rule; the first variant on which their results
differ (or either fails) is shown with both results there and where they differ.  The
queries run as on the base database: the DuckDB SQL each side became, or an answer
written in a server engine's dialect translated to DuckDB (the variants are DuckDB).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from curate.verify.pair import PairCheck, Side, side_by_side, side_table
from score.comparison.compare import compare
from score.execution.executor import ExecutorSettings
from score.execution.result import QueryError, QueryResult
from score.scoring.suite_phase import open_variant
from score.suite.suite_file import DEFAULT_SUITE_CACHE, Suite, check_suite_for

if TYPE_CHECKING:
    from score.comparison.result_diff import ResultDiff


@dataclass(frozen=True)
class SuiteFinding:
    """What the suite's variants said of a pair: ``checked`` variants run, and the first
    one on which gold and answer differ (None: the same result on all), with both sides
    there, why and where they differ; ``skipped`` says why nothing ran."""

    variants: int
    checked: int = 0
    variant: str | None = None
    gold: Side | None = None
    answer: Side | None = None
    reason: str = ""
    diff: ResultDiff | None = None
    skipped: str | None = None

    @property
    def ok(self) -> bool:
        return self.variant is None


def _query(side: Side) -> tuple[str, str | None] | None:
    """The SQL a side ran on the base database and the dialect to give a variant:
    its DuckDB form, or the text as written in a server engine's dialect."""
    if side.sql is not None:
        return side.sql, None
    if side.result is not None:  # run as written on a server engine: translated
        return side.source_sql, side.dialect
    return None


def check_on_suite(
    check: PairCheck,
    suite: Suite,
    settings: ExecutorSettings,
    base_fingerprint: str,
    *,
    databases: Path = DEFAULT_SUITE_CACHE,
) -> SuiteFinding:
    """Run the pair of ``check`` on every variant of ``suite`` until one tells them
    apart.  A suite built on another base database is refused (SuiteError)."""
    check_suite_for(
        suite, task_set_sha256=suite.task_set_sha256, base_fingerprint=base_fingerprint
    )  # one pair is checked, not a task set: only the base database must be the suite's
    total = len(suite.variants)
    gold, answer = _query(check.gold), _query(check.answer)
    if gold is None or answer is None:
        return SuiteFinding(total, skipped="a side did not run on the base database")
    for number, variant in enumerate(suite.variants, start=1):
        with open_variant(suite, variant, settings, databases) as executor:
            found = [executor.try_execute(sql, dialect=dialect) for sql, dialect in (gold, answer)]
        sides = [
            _side(side, f"{side.label} on {variant.name}", result)
            for side, result in zip((check.gold, check.answer), found, strict=True)
        ]
        g, a = found
        if isinstance(g, QueryError) or isinstance(a, QueryError):
            failed = [s for s in sides if s.result is None]
            reason = "; ".join(f"the {s.label} failed ({s.error})" for s in failed)
            return SuiteFinding(total, number, variant.name, sides[0], sides[1], reason)
        verdict = compare(g, a, check.profile, order_matters=check.order_matters)
        if not verdict.match:
            from score.comparison.result_diff import diff_results

            diff = diff_results(g, a, order_matters=check.order_matters)
            return SuiteFinding(
                total, number, variant.name, sides[0], sides[1], verdict.reason, diff
            )
    return SuiteFinding(total, total)


def _side(side: Side, label: str, found: QueryResult | QueryError) -> Side:
    if isinstance(found, QueryError):
        return replace(side, label=label, result=None, error=f"{found.kind}: {found.message}")
    return replace(side, label=label, result=found, error=None)


def render_suite(finding: SuiteFinding, suite: Suite, *, rows: int = 5) -> str:
    """What ``verify --suite`` adds after the base database's report."""
    head = f"test suite {suite.folder} ({finding.variants} variant(s))"
    if finding.skipped:
        return f"{head}: not checked: {finding.skipped}"
    if finding.ok:
        return f"{head}: SAME RESULT on every variant"
    assert finding.gold is not None and finding.answer is not None
    lines = [
        f"{head}: DIFFERENT on variant {finding.variant} "
        f"({finding.checked} of {finding.variants} checked): {finding.reason}",
        "",
        *side_by_side(side_table(finding.gold, rows), side_table(finding.answer, rows)),
    ]
    if finding.diff is not None:
        lines += ["", finding.diff.render()]
    return "\n".join(lines)
