"""One prediction's answer, handled inside a sandbox worker under the query time limit.

Everything a model's text goes through before its result can be compared happens in
the worker (:mod:`score.execution.processes.sandbox`), so extraction, parsing, the guard, the
logical-form match and the run all count against one time limit and one memory limit, and whatever
the text does ends as this answer's reply, never as a failure of the run:

1. extraction (:func:`score.scoring.extract.extract`) for a raw output; a ready ``sql`` that
   is null or ``"null"`` abstains; a TEXT-TO-OMOP ``pred`` is taken as that benchmark's
   evaluator takes it (:func:`score.inputs.text2omop.evaluated_pred`: ``<NO_SQL>``
   abstains, anything else is run, and an empty one fails);
2. the statement preparation (:func:`score.execution.statement.prepare_statement`);
3. the run (the engine's own check reads the same parse);
4. the logical-form match against the gold (seed 003), on the guard's parse.

The reply carries what the scorer records (:class:`AnswerReply`); comparing results
with the gold happens in the scoring process.

An answer can also be handled in two steps by two workers, so that one parses while
the other runs (the scorer's pipeline with one job): :class:`PrepareAnswer` does steps
1, 2 and 4 and names the SQL to run, and :class:`RunAnswer` runs it in what is left of
the same time limit.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, replace
from typing import ClassVar

from score.comparison.profiles.logical_form import (
    collapse_whitespace,
    normalise_sql,
    normalise_tree,
)
from score.execution.lanes import PARSE_LANE
from score.execution.processes.messages import Session
from score.execution.result import QueryError, QueryResult
from score.execution.statement import Statement
from score.inputs.text2omop import NO_SQL, evaluated_pred
from score.scoring.extract import ABSTAIN, SQL, extract


@dataclass(frozen=True)
class AnswerReply:
    """What became of one answer: ``kind`` is the extraction's verdict (``sql``,
    ``abstain``, ``cut_off``, ``format_failure``) and ``reason`` why (for SQL taken from
    a raw output, the extraction rule that took it; empty for SQL given as SQL); for SQL,
    the text, what ran, the logical-form match and either the result or the error."""

    kind: str
    reason: str
    sql: str | None = None
    executed_sql: str | None = None
    lf_match: bool | None = None
    result: QueryResult | None = None
    error: QueryError | None = None
    seconds_left: float | None = None  # of the time limit, after a PrepareAnswer
    checked: bool = False  # a PrepareAnswer did the engine's check ahead (see RunAnswer)
    transpiled_from: str | None = None  # the dialect the SQL was transpiled from to run


@dataclass(frozen=True)
class Answer:
    """A prediction's ``output`` (raw model text, or with ``pred`` a TEXT-TO-OMOP
    ``pred``) or ready ``sql``; ``gold_sql`` is compared by logical form when given."""

    output: str | None = None
    sql: str | None = None
    ready_sql: bool = False
    pred: bool = False
    status: str | None = None
    gold_sql: str | None = None
    today: dt.date | None = None  # the task's fixed today (None: the settings' own)
    dialect: str | None = None  # the dialect the prediction was written for, if not the engine's
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> AnswerReply:
        decided, sql, statement, how = self._statement(session)
        if decided is not None:
            return decided
        # run first: the engine's check reads the tree, which the logical form then
        # writes in place
        result, error = None, None
        try:
            result = session.run(statement.sql, tree=statement.checked_tree)
        except QueryError as e:
            error = e
        lf = self._lf(sql, statement, session.settings.max_sql_bytes)
        return AnswerReply(
            SQL,
            how,
            sql,
            statement.sql,
            lf,
            result=result,
            error=error,
            transpiled_from=statement.transpiled_from,
        )

    def _statement(
        self, session: Session
    ) -> tuple[AnswerReply, None, None, str] | tuple[None, str, Statement, str]:
        """The extraction and the guard: a reply when nothing is left to run (an
        abstention, a format failure, a refused query), else the SQL and its statement;
        and the extraction rule that took the SQL (empty for SQL given as SQL)."""
        how = ""
        if self.pred:
            evaluated = evaluated_pred(self.output or "")
            if evaluated is None:
                return AnswerReply(ABSTAIN, f"the pred is {NO_SQL}"), None, None, how
            if not evaluated.strip():
                empty = QueryError(
                    "parse_error", "empty SQL (TEXT-TO-OMOP's evaluator fails to execute it)"
                )
                return AnswerReply(SQL, "", evaluated, None, None, error=empty), None, None, how
            sql = evaluated
        elif self.ready_sql:
            if self.sql is None or self.sql.strip().lower() == "null":
                return AnswerReply(ABSTAIN, "the answer is null"), None, None, how
            sql = self.sql
        else:
            extraction = extract(self.output, self.status)
            if extraction.kind != SQL:
                return AnswerReply(extraction.kind, extraction.reason), None, None, how
            sql, how = extraction.sql, extraction.reason
        try:
            # a prediction is parsed for itself (seen once: the guard's cache would only
            # hold it), so its logical form may be made from the tree without a copy
            statement = session.prepare(
                sql, self.dialect, engine_check=False, today=self.today, private_tree=True
            )
        except QueryError as e:
            lf = self._lf(sql, None, session.settings.max_sql_bytes)
            return AnswerReply(SQL, how, sql, None, lf, error=e), None, None, how
        return None, sql, statement, how

    def _lf(self, sql: str, statement, max_bytes: int) -> bool | None:
        """Seed 003's logical-form match, reusing the guard's parse when there is one
        (a text too long to be parsed is compared as text)."""
        if not self.gold_sql:
            return None
        tree = statement.tree if statement is not None else None
        if tree is None:
            if len(sql) > max_bytes:
                return collapse_whitespace(self.gold_sql) == collapse_whitespace(sql)
            return normalise_sql(self.gold_sql) == normalise_sql(sql)
        try:
            predicted = normalise_tree(tree, copy=not statement.tree_is_private)
        except RecursionError:
            predicted = collapse_whitespace(sql)
        return normalise_sql(self.gold_sql) == predicted


@dataclass(frozen=True)
class PrepareAnswer:
    """An :class:`Answer` up to its run: extraction, guard and logical-form match.  The
    reply is final unless its ``executed_sql`` is set and it has neither ``result`` nor
    ``error``: that SQL is then the :class:`RunAnswer` to send.  The engine's own check
    reads it there, as it reads every query it runs, unless the check reads nothing but
    the guard's tree (PostgreSQL's): it is then done here, on the tree the guard made,
    and the reply says so (``checked``)."""

    answer: Answer
    timed: ClassVar[bool] = True
    lane: ClassVar[str] = PARSE_LANE  # its workers run no query: their memory stays small

    def handle(self, session: Session) -> AnswerReply:
        decided, sql, statement, how = self.answer._statement(session)
        if decided is not None:
            return decided
        checked, error = False, None
        try:  # before the logical form, which may write the tree in place
            checked = session.engine.check_ahead(statement.checked_tree)
        except QueryError as e:
            error = e
        lf = self.answer._lf(sql, statement, session.settings.max_sql_bytes)
        transpiled = statement.transpiled_from
        if error is not None:
            return AnswerReply(
                SQL, how, sql, statement.sql, lf, error=error, transpiled_from=transpiled
            )
        left = None if session.deadline is None else session.deadline - time.monotonic()
        return AnswerReply(
            SQL,
            how,
            sql,
            statement.sql,
            lf,
            seconds_left=left,
            checked=checked,
            transpiled_from=transpiled,
        )


def needs_run(reply: AnswerReply) -> bool:
    """A :class:`PrepareAnswer` reply whose SQL is still to run."""
    return (
        reply.kind == SQL
        and reply.executed_sql is not None
        and reply.result is None
        and reply.error is None
    )


@dataclass(frozen=True)
class RunAnswer:
    """Run what a :class:`PrepareAnswer` admitted, within ``seconds`` (what is left of the
    answer's time limit after its preparation); ``checked``: its reply said the engine's
    check was done there, on this very text, so it is not done again."""

    sql: str
    seconds: float
    checked: bool = False
    timed: ClassVar[bool] = True

    def handle(self, session: Session) -> QueryResult | QueryError:
        """The result, or the query's error as a value (so that a raised QueryError
        means the worker itself was lost, as with :class:`Answer`)."""
        try:
            return session.run(self.sql, check=not self.checked)
        except QueryError as e:
            return e


def with_run(reply: AnswerReply, outcome: QueryResult | QueryError) -> AnswerReply:
    """A prepared reply completed by its run's result or error."""
    if isinstance(outcome, QueryError):
        return replace(reply, error=outcome, seconds_left=None)
    return replace(reply, result=outcome, seconds_left=None)
