"""Verification: run a gold on the database and keep it only if it meets the rules.

Uses the very executor and comparator that later score predictions, so a task is
verified by the rule that scores it:

* the gold must pass the executor's guard and run (:mod:`score.execution.executor`);
* it must meet the reference rules (:mod:`curate.verify.reference_rules`): row counts, not
  all zero or NULL, no current date unless a fixed today is set, deterministic;
* a reference answer, when the record has one, must return the same result under the
  scoring comparator profile (:func:`score.comparison.compare.compare`).

Every failure is a :class:`Drop` naming its stage and rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from curate.verify import window_ties
from curate.verify.reference_rules import (
    ReferenceRules,
    check_query_rules,
    check_result_rules,
    draws_at_random,
    first_open_tie,
    may_vary,
    order_probe,
    probe_keys,
    split_probe,
)
from score.comparison.compare import compare
from score.execution.executor import Executor
from score.execution.guard import check_statement
from score.execution.result import QueryError, QueryResult


@dataclass(frozen=True)
class Drop:
    """Why a record is not kept: the pipeline stage, the rule, and a readable reason."""

    stage: str
    rule: str
    reason: str
    #: for a reference answer that differs: both results' first rows and the rows that
    #: differ (:func:`score.scoring.result_preview.result_preview`), for the report's page
    preview: dict[str, Any] | None = field(default=None, compare=False, repr=False)


def internal_drop(error: BaseException, stage: str) -> Drop:
    """An unexpected exception as a drop: stage ``internal``, the exception's type as rule.

    >>> internal_drop(ValueError("bad\\nvalue"), "verify")
    Drop(stage='internal', rule='ValueError', reason='ValueError while in stage verify: bad value')
    """
    kind = type(error).__name__
    message = " ".join(str(error).split())
    if len(message) > 500:
        message = message[:497] + "..."
    return Drop("internal", kind, f"{kind} while in stage {stage}: {message}")


@dataclass(frozen=True)
class GoldRun:
    """A gold that met the reference rules: its result and, where its order probe ran,
    the ORDER BY key values of each of its rows (``order_keys``, row for row; None
    otherwise).  Neighbouring rows with equal keys are tied: their order is the
    determinism rules' question, not another check's (:mod:`curate.verify.tied_rows`)."""

    result: QueryResult
    order_keys: QueryResult | None = None


def run_gold(
    sql: str,
    executor: Executor,
    rules: ReferenceRules,
    *,
    order_matters: bool,
    profile: str,
    tree: exp.Expression | None = None,
    keys_wanted: bool = False,
) -> GoldRun | Drop:
    """The gold's run if it meets every reference rule, else the Drop saying why.

    One execution serves every check that can share it.  A gold with a top-level ORDER BY
    runs once with its ORDER BY keys appended (and one row past its LIMIT n, if any):
    that run is its result, its LIMIT's tie check, and shows whether its order is total
    (:func:`curate.verify.reference_rules.order_probe`).  A second run, for determinism,
    is made only when the plan can give another result: for what
    :func:`~curate.verify.reference_rules.may_vary` names in the tree, and for an order
    that matters and that the first run does not show to be total (rows that differ
    tied on every ORDER BY key).  ``tree`` is the gold already parsed (the guard's tree
    of ``sql``).  ``keys_wanted`` runs the order probe (in place of the gold, no more
    executions) even where no rule needs it, for its ORDER BY keys.
    """
    try:
        tree = tree if tree is not None else check_statement(sql)
    except QueryError as e:
        return Drop("verify", "single_select", f"{e.kind}: {e.message}")
    failure = check_query_rules(tree, rules, today_fixed=executor.settings.today is not None)
    if failure:
        return Drop("verify", failure.rule, failure.reason)
    order_checked = rules.deterministic and order_matters
    keyed = order_checked or keys_wanted
    probe = order_probe(tree) if rules.no_ties_at_limit or keyed else None
    if probe is not None and probe.n is None and not keyed:
        probe = None  # no LIMIT to check, no order to show total or keys: the gold as it is
    first: QueryResult | QueryError | None = None
    keys: QueryResult | None = None  # the ORDER BY keys of each row of first
    cut, order_open = False, True  # the LIMIT cuts through ties; the order is not total
    if probe is not None:
        probed = executor.try_execute(probe.query.sql("duckdb"))
        if isinstance(probed, QueryResult):
            first, cut, order_open = split_probe(probed, probe)
            keys = probe_keys(probed, probe)
            keys = QueryResult(keys.columns, keys.types, keys.table.slice(0, first.num_rows))
    if first is None:
        first = executor.try_execute(sql)
    if isinstance(first, QueryError):
        return Drop("verify", "runs", f"the gold fails: {first.kind}: {first.message}")
    failure = check_result_rules(first, rules)
    if failure:
        return Drop("verify", failure.rule, failure.reason)
    if rules.window_order_ties:
        drop = window_ties_drop(tree, first, executor, order_matters=order_matters, profile=profile)
        if drop:
            return drop
    if cut and rules.no_ties_at_limit:  # shown by the first run: no second run decides it
        return Drop(
            "verify",
            "no_ties_at_limit",
            f"ORDER BY ... LIMIT {probe.n} cuts through rows tied on the ORDER BY keys "
            "(add a tie-breaker)",
        )
    tied = first_open_tie(first, keys) if order_checked and keys is not None else None
    if tied is not None:
        return Drop(
            "verify",
            "deterministic",
            f"its ORDER BY leaves rows that differ tied (rows {tied} and {tied + 1} have the "
            "same ORDER BY keys): their order is the query plan's, two runs may differ and "
            "a right answer may order them otherwise; add a tie-breaker to the ORDER BY",
        )
    drawn = draws_at_random(tree) if rules.deterministic else None
    if drawn is not None:
        return Drop("verify", "deterministic", f"{drawn} draws a new value at every run")
    if rules.deterministic and _second_run_needed(tree, order_matters, order_open or cut):
        second = executor.try_execute(sql)
        if isinstance(second, QueryError):
            return Drop("verify", "deterministic", f"a second run fails: {second.message}")
        verdict = compare(first, second, profile, order_matters=order_matters)
        if not verdict.match:
            return Drop("verify", "deterministic", f"two runs differ: {verdict.reason}")
    return GoldRun(first, keys)


def _second_run_needed(tree: exp.Expression, order_matters: bool, order_open: bool) -> bool:
    """Whether a second run could differ from the first: the tree can pick or order
    rows arbitrarily (:func:`may_vary`), or its order matters and the first run did not
    show it total."""
    if may_vary(tree, order_matters=False):
        return True
    return order_open and may_vary(tree, order_matters=order_matters) is not None


def window_ties_drop(
    tree, first: QueryResult, executor: Executor, *, order_matters: bool, profile: str
) -> Drop | None:
    """Rule ``window_order_ties``: a Drop if a ranking's result depends on how ties fall.

    The steps of :mod:`curate.verify.window_ties`: rankings proven total by their block's
    GROUP BY need no query; the others are checked on the data for tied rows that differ;
    where some do, the gold is run with the ties broken both ways and must give ``first``.
    """
    found = window_ties.rankings(tree)
    tied: dict[int, tuple] = {}
    for index, ranking in enumerate(found):
        if window_ties.proven_total(ranking):
            continue
        query = window_ties.tie_query(tree, ranking)
        result = executor.try_execute(query.sql("duckdb")) if query is not None else None
        if not isinstance(result, QueryResult):
            return Drop("verify", window_ties.RULE, window_ties.describe(ranking, None))
        if result.num_rows:
            tied[index] = result.rows()[0]
    if not tied:
        return None
    for descending in (False, True):
        variant = window_ties.with_tie_breaks(tree, list(tied), descending)
        other = executor.try_execute(variant.sql("duckdb"))
        same = (
            isinstance(other, QueryResult)
            and compare(first, other, profile, order_matters=order_matters).match
        )
        if not same:
            index = next(iter(tied))
            reason = window_ties.describe(found[index], tied[index], broken=True)
            return Drop("verify", window_ties.RULE, reason)
    return None


def check_answer(
    gold: QueryResult | list[QueryResult],
    answer_sql: str,
    executor: Executor,
    *,
    order_matters: bool,
    profile: str,
    ran: QueryResult | QueryError | None = None,
) -> Drop | None:
    """None if the reference answer returns the gold's result under ``profile`` (or one
    of ``gold``'s, a list: the gold's and its alternatives'; ``ran``: its run, already
    made; else it runs now)."""
    answer = ran if ran is not None else executor.try_execute(answer_sql)
    if isinstance(answer, QueryError):
        return Drop(
            "answer", "answer_runs", f"the reference answer fails: {answer.kind}: {answer.message}"
        )
    verdict = compare(gold, answer, profile, order_matters=order_matters)
    if not verdict.match:
        from score.scoring.result_preview import result_preview

        try:
            preview = result_preview(gold, answer, match=False, order_matters=order_matters)
        except Exception:  # noqa: BLE001 - the page's preview never costs the drop
            preview = None
        reason = f"the reference answer differs: {verdict.reason}"
        return Drop("answer", "answer_matches", reason, preview)
    return None


def check_unanswerable(
    empty_tables: tuple[str, ...],
    null_columns: tuple[str, ...],
    executor: Executor,
    declared: str | None = None,
) -> Drop | None:
    """None if every named table is empty and every named column NULL in every row.

    A record whose source declares it unanswerable (``declared``, e.g. TEXT-TO-OMOP's
    ``<NO_SQL>``) needs no named cause: the declaration is kept as it stands, and any
    tables or columns it also names are still checked.  Every count is taken by one
    query; only if it fails is each counted alone, so the failing column is named."""
    if not empty_tables and not null_columns and not declared:
        return Drop(
            "unanswerable",
            "names_a_cause",
            "an unanswerable record must name empty tables or all-NULL columns",
        )
    counted = [("*", table) for table in empty_tables]
    counted += [(f'"{c}"', t) for t, _, c in (q.partition(".") for q in null_columns)]
    counts = _counts([(c, t) for c, t in counted if t in executor.tables], executor)
    for table in empty_tables:
        if table not in executor.tables:
            return Drop(
                "unanswerable", "table_exists", f"cdm.{table} is not a table of this database"
            )
        count = counts.get(("*", table)) if counts else None
        if count is None:
            (count,) = executor.execute(f'SELECT count(*) FROM cdm."{table}"').rows()[0]
        if count:
            return Drop("unanswerable", "table_is_empty", f"cdm.{table} has {count} rows, not 0")
    for qualified in null_columns:
        table, _, column = qualified.partition(".")
        if table not in executor.tables:
            return Drop(
                "unanswerable", "table_exists", f"cdm.{table} is not a table of this database"
            )
        count = counts.get((f'"{column}"', table)) if counts else None
        if count is None:
            found = executor.try_execute(f'SELECT count("{column}") FROM cdm."{table}"')
            if isinstance(found, QueryError):
                return Drop("unanswerable", "column_exists", f"{qualified}: {found.message}")
            (count,) = found.rows()[0]
        if count:
            return Drop(
                "unanswerable", "column_is_null", f"{qualified} has {count} non-NULL values"
            )
    return None


def _counts(counted: list[tuple[str, str]], executor: Executor) -> dict[tuple[str, str], int]:
    """``count(what)`` of each ``(what, table)`` by one query ({} if it fails or for one)."""
    if len(counted) < 2:
        return {}
    sql = "SELECT " + ", ".join(
        f'(SELECT count({what}) FROM cdm."{table}") AS c{i}'
        for i, (what, table) in enumerate(counted)
    )
    found = executor.try_execute(sql)
    if isinstance(found, QueryError):
        return {}
    return dict(zip(counted, found.rows()[0], strict=True))
