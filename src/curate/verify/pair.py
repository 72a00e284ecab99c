"""Checking one gold / answer pair while editing (``sqlgold verify``).

Both queries are transpiled as curation would, run by the scoring executor, and
compared under the scoring profile; the text shows both results side by side (types,
row counts, first rows), the verdict, and where they differ (:mod:`score.comparison.result_diff`).
The gold meets exactly the checks curation applies (:func:`curate.pipeline.verify_gold`:
the reference rules, unsettled transpile warnings, the collation check), and the text
names the rule it fails.  An empty gold also gets concept hints
(:mod:`curate.verify.concept_hints`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from curate.pipeline import CurationOptions, curation_context, verify_gold
from curate.sources import READ_DIALECT
from curate.transpile.to_duckdb import Transpiled, TranspileError, transpile
from curate.verify.gold import Drop
from curate.verify.reference_rules import ReferenceRules
from score.comparison.compare import compare
from score.comparison.mismatch_cause import Cause, mismatch_cause
from score.comparison.order_matters import order_matters as gold_orders_rows
from score.comparison.values import show
from score.execution.engines import EngineKind, engine_sql
from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult

if TYPE_CHECKING:  # imported where used: only an empty gold or a mismatch needs them
    from sqlglot import exp

    from curate.verify.concept_hints import ConceptHint
    from score.comparison.result_diff import ResultDiff


#: How an engine is named in what verify prints.
ENGINE_NAMES = {"duckdb": "DuckDB", "postgres": "PostgreSQL", "spark": "Spark"}


@dataclass(frozen=True)
class Side:
    label: str
    source_sql: str
    dialect: str
    sql: str | None  # the DuckDB SQL it became (None: transpile failed, or run as written)
    rules: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    result: QueryResult | None = None
    error: str | None = None
    engine: str = "duckdb"  # the engine it ran on (an EngineKind value)
    engine_sql: str | None = None  # what that engine ran, when it is not ``sql``

    @property
    def transpiled(self) -> bool:
        return self.sql is not None and self.sql.strip() != self.source_sql.strip()


@dataclass(frozen=True)
class PairCheck:
    gold: Side
    answer: Side
    order_matters: bool
    profile: str
    match: bool | None  # None: one side did not run
    reason: str

    @property
    def ok(self) -> bool:
        """Same result, and a gold curation would keep (every reference rule met)."""
        return (
            bool(self.match)
            and self.drop is None
            and self.gold.result is not None
            and self.gold.result.num_rows > 0
        )

    diff: ResultDiff | None = None
    hints: list[ConceptHint] = field(default_factory=list)
    drop: Drop | None = None  # the check the gold fails, as curation would drop it
    cause: Cause | None = None  # what one change would make the results the same


def run_side(
    label: str, sql: str, dialect: str, executor: Executor, tree: exp.Expr | None = None
) -> Side:
    """One query checked as curation would: transpiled to DuckDB SQL (the gold's form in a
    task), then run by ``executor`` on its engine (which translates DuckDB SQL to its own
    dialect).  An answer written in a server engine's own dialect runs there as written.
    ``tree`` is the query already read (a record's gold made one query, as curation reads
    it: :func:`curate.ohdsi.render.render_record_gold_tree`), ``sql`` then its source."""
    kind = executor.kind
    if label == "answer" and dialect == kind.value and kind is not EngineKind.DUCKDB:
        found = executor.try_execute(sql, dialect=dialect)
        error = None if isinstance(found, QueryResult) else f"{found.kind}: {found.message}"
        result = found if isinstance(found, QueryResult) else None
        return Side(label, sql, dialect, None, result=result, error=error, engine=kind.value)
    read = READ_DIALECT.get(dialect)
    if read is None:
        return Side(label, sql, dialect, None, error=f"unknown dialect {dialect!r}")
    try:
        t = transpile(sql, read=read, tree=tree)
    except TranspileError as e:
        return Side(label, sql, dialect, None, error=f"transpile: {e.message}")
    ran = None
    if kind is not EngineKind.DUCKDB:
        try:
            ran = engine_sql(kind, t.sql)
        except QueryError:
            ran = None  # the run below says why
    found = executor.try_execute(t.sql)
    side = Side(label, sql, dialect, t.sql, tuple(t.rules), tuple(t.warnings))
    side = replace(side, engine=kind.value, engine_sql=ran)
    if isinstance(found, QueryError):
        return replace(side, error=f"{found.kind}: {found.message}")
    return replace(side, result=found)


def reference_drop(
    gold: Side,
    executor: Executor,
    *,
    order_matters: bool,
    profile: str = "sqlgold",
    rules: ReferenceRules | None = None,
) -> Drop | None:
    """The check a transpiled gold fails, exactly as curation would drop it (the
    reference rules, unsettled transpile warnings, the collation check); None when it
    meets every one or did not transpile."""
    if gold.sql is None:
        return None
    options = CurationOptions(rules=rules or ReferenceRules(), profile=profile)
    with curation_context(executor, options) as ctx:
        checked, _ = verify_gold(
            Transpiled(gold.sql, gold.rules, gold.warnings), ctx, order_matters=order_matters
        )
    return checked if isinstance(checked, Drop) else None


def reference_line(drop: Drop | None, gold: Side) -> list[str]:
    """What verify says of the reference rules."""
    if drop is not None:
        return [
            f"reference rule: FAILS {drop.stage}/{drop.rule}: {drop.reason} "
            "(curation drops this gold)"
        ]
    return ["reference rules: the gold meets every one"] if gold.sql is not None else []


def ran_lines(side: Side) -> list[str]:
    """The SQL a side became and ran, where it is not the text given."""
    lines = []
    name = ENGINE_NAMES.get(side.engine, side.engine)
    ran = side.engine_sql
    ran_as_given = ran is not None and ran.strip() == (side.sql or side.source_sql).strip()
    if side.transpiled:
        assert side.sql is not None
        if side.engine == "duckdb" or ran_as_given:  # the engine ran the DuckDB SQL unchanged
            where = f"run on {name}"
        else:
            where = "transpiled to DuckDB"
        lines += [f"{side.label} as {where}:", "  " + side.sql.replace("\n", "\n  ")]
    if ran is not None and not ran_as_given:
        lines += [f"{side.label} as run on {name}:", "  " + ran.replace("\n", "\n  ")]
    return lines


def verify_pair(
    gold_sql: str,
    answer_sql: str,
    executor: Executor,
    *,
    gold_dialect: str = "tsql",
    answer_dialect: str = "duckdb",
    profile: str = "sqlgold",
    order_matters: bool | None = None,
    rules: ReferenceRules | None = None,
    gold_tree: exp.Expr | None = None,
) -> PairCheck:
    """Run both queries and say whether, and where, their results differ.

    The gold also meets the checks curation applies, with ``rules`` (the default
    reference rules unless given) and the executor's fixed today; ``gold_tree`` is the
    gold already read (:func:`run_side`).
    """
    gold = run_side("gold", gold_sql, gold_dialect, executor, gold_tree)
    answer = run_side("answer", answer_sql, answer_dialect, executor)
    order = order_matters
    if order is None:
        order = gold_orders_rows(gold.sql) if gold.sql else False
    drop = reference_drop(gold, executor, order_matters=order, profile=profile, rules=rules)
    hints: list[ConceptHint] = []
    if gold.result is not None and gold.result.num_rows == 0 and gold.sql:
        from curate.verify.concept_hints import concept_hints

        hints = concept_hints(gold.sql, executor)
    if gold.result is None or answer.result is None:
        failed = [s for s in (gold, answer) if s.result is None]
        reason = "; ".join(f"the {s.label} did not run ({s.error})" for s in failed)
        return PairCheck(gold, answer, order, profile, None, reason, hints=hints, drop=drop)
    verdict = compare(gold.result, answer.result, profile, order_matters=order)
    diff, cause = None, None
    if not verdict.match:  # where they differ is shown only for a mismatch
        from score.comparison.result_diff import diff_results

        diff = diff_results(gold.result, answer.result, order_matters=order)
        cause = mismatch_cause(gold.result, answer.result, order_matters=order)
    return PairCheck(
        gold, answer, order, profile, verdict.match, verdict.reason, diff, hints, drop, cause
    )


def side_table(side: Side, rows: int) -> list[str]:
    """One side of a pair as ``verify`` prints it: its label, then its first ``rows`` rows
    under a header of column names and types (or its error)."""
    if side.sql is None and side.engine == side.dialect != "duckdb":
        how = f", as written on {ENGINE_NAMES.get(side.engine, side.engine)}"
    else:
        how = ", transpiled" if side.dialect != "duckdb" else ""
    head = [f"{side.label} ({side.dialect}{how})"]
    if side.result is None:
        return head + [f"  error: {side.error}"]
    r = side.result
    cells = [[f"{n} {t}" for n, t in zip(r.columns, r.types, strict=True)]]
    cells += [[show(v) for v in row] for row in r.rows()[:rows]]
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))] if cells[0] else []
    lines = [" | ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)) for line in cells]
    if lines:
        lines.insert(1, "-+-".join("-" * w for w in widths))
    more = f" (first {rows} shown)" if r.num_rows > rows else ""
    return (
        head
        + ["  " + line for line in lines]
        + [f"  {r.num_rows} row(s){more}, {r.seconds * 1000:.1f} ms"]
    )


def side_by_side(left: list[str], right: list[str], gap: int = 4) -> list[str]:
    """Two blocks of lines next to each other.

    >>> side_by_side(["a", "bbb"], ["x"])
    ['a      x', 'bbb']
    """
    width = max((len(s) for s in left), default=0) + gap
    return [
        (a.ljust(width) + b).rstrip()
        for a, b in zip(
            left + [""] * (len(right) - len(left)),
            right + [""] * (len(left) - len(right)),
            strict=True,
        )
    ]


def _footer_down(block: list[str], height: int, has_footer: bool) -> list[str]:
    """``block`` made ``height`` lines long by blank lines above its footer (the row
    count), so two tables side by side end on the same line.

    >>> _footer_down(["t", "  a", "  1 row(s)"], 4, True)
    ['t', '  a', '', '  1 row(s)']
    """
    missing = height - len(block)
    if missing <= 0 or not has_footer:
        return block
    return block[:-1] + [""] * missing + block[-1:]


def render_pair(check: PairCheck, *, rows: int = 5, width: int = 160) -> str:
    """The report ``sqlgold verify`` prints."""
    left, right = side_table(check.gold, rows), side_table(check.answer, rows)
    if max(map(len, left + right)) * 2 + 4 <= width:
        height = max(len(left), len(right))  # the two footers on one line
        left = _footer_down(left, height, check.gold.result is not None)
        right = _footer_down(right, height, check.answer.result is not None)
        body = side_by_side(left, right)
    else:
        body = left + [""] + right
    lines = [*body, ""]
    for side in (check.gold, check.answer):
        lines += ran_lines(side)
        if side.rules:
            lines.append(f"{side.label} transpile rules: {', '.join(side.rules)}")
        for w in side.warnings:
            lines.append(f"{side.label} warning: {w}")
    order = "in order" if check.order_matters else "as multisets"
    lines += reference_line(check.drop, check.gold)
    if check.match is None:
        lines.append(f"verdict: not compared: {check.reason}")
    elif check.match:
        lines.append(f"verdict ({check.profile}, rows {order}): SAME RESULT: {check.reason}")
    else:
        lines.append(f"verdict ({check.profile}, rows {order}): DIFFERENT")
        if check.cause is not None:
            lines.append(f"cause: {check.cause}")
        if check.diff is not None:
            lines += ["", check.diff.render()]
    if check.gold.result is not None and check.gold.result.num_rows == 0:
        lines.append("the gold is empty: any query that returns nothing would match it")
    if check.hints:
        lines += ["", "the gold is empty; its concept ids on this database:"]
        lines += ["  " + h.render().replace("\n", "\n  ") for h in check.hints]
    return "\n".join(lines)
