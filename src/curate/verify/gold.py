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

from dataclasses import dataclass

from curate.verify.reference_rules import (
    ReferenceRules,
    check_query_rules,
    check_result_rules,
    cuts_ties,
    tie_probe,
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


def run_gold(
    sql: str, executor: Executor, rules: ReferenceRules, *, order_matters: bool, profile: str
) -> QueryResult | Drop:
    """The gold's result if it meets every reference rule, else the Drop saying why."""
    try:
        tree = check_statement(sql)
    except QueryError as e:
        return Drop("verify", "single_select", f"{e.kind}: {e.message}")
    failure = check_query_rules(tree, rules, today_fixed=executor.settings.today is not None)
    if failure:
        return Drop("verify", failure.rule, failure.reason)
    first = executor.try_execute(sql)
    if isinstance(first, QueryError):
        return Drop("verify", "runs", f"the gold fails: {first.kind}: {first.message}")
    failure = check_result_rules(first, rules)
    if failure:
        return Drop("verify", failure.rule, failure.reason)
    if rules.deterministic:
        second = executor.try_execute(sql)
        if isinstance(second, QueryError):
            return Drop("verify", "deterministic", f"a second run fails: {second.message}")
        verdict = compare(first, second, profile, order_matters=order_matters)
        if not verdict.match:
            return Drop("verify", "deterministic", f"two runs differ: {verdict.reason}")
    if rules.no_ties_at_limit:
        probe = tie_probe(tree)
        if probe is not None:
            probe_sql, n, _ = probe
            probed = executor.try_execute(probe_sql.sql("duckdb"))
            if isinstance(probed, QueryResult) and cuts_ties(probed, n):
                return Drop(
                    "verify",
                    "no_ties_at_limit",
                    f"ORDER BY ... LIMIT {n} cuts through rows tied on the ORDER BY keys "
                    "(add a tie-breaker)",
                )
    return first


def check_answer(
    gold: QueryResult,
    answer_sql: str,
    executor: Executor,
    *,
    order_matters: bool,
    profile: str,
) -> Drop | None:
    """None if the reference answer returns the gold's result under ``profile``."""
    answer = executor.try_execute(answer_sql)
    if isinstance(answer, QueryError):
        return Drop(
            "answer", "answer_runs", f"the reference answer fails: {answer.kind}: {answer.message}"
        )
    verdict = compare(gold, answer, profile, order_matters=order_matters)
    if not verdict.match:
        return Drop("answer", "answer_matches", f"the reference answer differs: {verdict.reason}")
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
    tables or columns it also names are still checked."""
    if not empty_tables and not null_columns and not declared:
        return Drop(
            "unanswerable",
            "names_a_cause",
            "an unanswerable record must name empty tables or all-NULL columns",
        )
    for table in empty_tables:
        if table not in executor.tables:
            return Drop(
                "unanswerable", "table_exists", f"cdm.{table} is not a table of this database"
            )
        (count,) = executor.execute(f'SELECT count(*) FROM cdm."{table}"').rows()[0]
        if count:
            return Drop("unanswerable", "table_is_empty", f"cdm.{table} has {count} rows, not 0")
    for qualified in null_columns:
        table, _, column = qualified.partition(".")
        if table not in executor.tables:
            return Drop(
                "unanswerable", "table_exists", f"cdm.{table} is not a table of this database"
            )
        found = executor.try_execute(f'SELECT count("{column}") FROM cdm."{table}"')
        if isinstance(found, QueryError):
            return Drop("unanswerable", "column_exists", f"{qualified}: {found.message}")
        (count,) = found.rows()[0]
        if count:
            return Drop(
                "unanswerable", "column_is_null", f"{qualified} has {count} non-NULL values"
            )
    return None
