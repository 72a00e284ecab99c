"""From a SQL text to a statement an engine may run: sized, guarded, today pinned.

This runs inside a sandbox worker (:mod:`score.execution.processes.sandbox`), under the query's
deadline, so a text that takes long to parse, or nests deeper than the parser can follow, costs one
query's time limit and never the run.  The text that runs is the text given, byte for byte,
except what an option changes on purpose: a fixed today replaces the clock readers among its
tokens and nothing else (:func:`score.execution.fixed_today.pin_today_in_text`), and a text
written for another dialect than the engine's is transpiled first (the one case where sqlglot
writes what runs).  In order:

1. a text over ``max_sql_bytes`` is refused before anything parses it;
2. a text in another dialect is transpiled to the engine's;
3. a fixed today is pinned into the text;
4. the sqlglot statement guard (:func:`score.execution.guard.check_statement`) reads the text
   that will run;
5. when sqlglot cannot read it, the engine's own parser must, and the guard's name rules are
   applied to the functions and tables it reports (a query that only DuckDB understands still
   cannot call ``read_text`` or ``duckdb_settings``); such a query may not read the clock under
   a fixed today in a form that was not pinned;
6. the engine's own parser must agree: exactly one read-only SELECT.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from score.execution.engines.base import Engine
from score.execution.fixed_today import clock_function_names, pin_today_in_text
from score.execution.guard import check_references, check_size, check_statement
from score.execution.result import QueryError
from score.execution.settings import ExecutorSettings


@dataclass(frozen=True)
class Statement:
    """A query that may run: ``sql`` is the text to run, ``tree`` sqlglot's tree of the
    text as given (before a fixed today was pinned in; None when only the engine's parser
    could read it) and ``checked_tree`` the guard's tree of ``sql`` itself."""

    sql: str
    tree: exp.Expr | None
    tree_is_private: bool = False  # not shared with the guard's cache: may be changed
    checked_tree: exp.Expr | None = None
    #: the dialect the text was transpiled from (None: it runs as written)
    transpiled_from: str | None = None


def prepare_statement(
    sql: str,
    engine: Engine,
    settings: ExecutorSettings,
    source_dialect: str | None = None,
    *,
    engine_check: bool = True,
    private_tree: bool = False,
) -> Statement:
    """Check ``sql`` and pin a fixed today; raise a QueryError if it may not run.
    Without ``engine_check`` step 6 is left to :meth:`Engine.run`, which does it anyway
    (one parse by the engine instead of two).  With ``private_tree`` the text is parsed
    anew, not taken from the guard's cache, so the statement's trees are the caller's to
    change.

    ``source_dialect`` says ``sql`` was written for another engine's dialect: it is
    transpiled to the engine's first (:func:`score.execution.engines.transpile`), and the guard
    judges what would run."""
    check_size(sql, settings.max_sql_bytes)
    dialect = getattr(engine, "dialect", "duckdb")
    transpiled_from = None
    if source_dialect and source_dialect != dialect:
        from score.execution.engines import transpile

        sql = transpile(sql, source_dialect, dialect)
        check_size(sql, settings.max_sql_bytes)
        transpiled_from = source_dialect
    given = sql
    pinned = False
    if settings.today is not None:
        sql, pinned = pin_today_in_text(sql, dialect, settings.today)
        check_size(sql, settings.max_sql_bytes)
    try:
        checked = check_statement(sql, dialect, cached=not private_tree)
    except QueryError as e:
        if e.kind != "parse_error":
            raise
        return _engine_only(sql, e, engine, settings, transpiled_from)
    tree = checked
    if pinned:  # the text as given, for what compares texts (the logical form)
        try:
            tree = check_statement(given, dialect, cached=not private_tree)
        except QueryError:
            tree = checked
    if engine_check:
        engine.check(sql)
    return Statement(sql, tree, private_tree, checked, transpiled_from)


def _engine_only(
    sql: str,
    unread: QueryError,
    engine: Engine,
    settings: ExecutorSettings,
    transpiled_from: str | None,
) -> Statement:
    """A text sqlglot could not read: the engine's parser decides, and the guard's name
    rules judge what it reports."""
    engine.check(sql)
    references = engine.references(sql)
    if references is None:
        raise QueryError("parse_error", f"{unread.message} (and the query cannot be checked)")
    check_references((r.kind, r.name) for r in references)
    if settings.today is not None:
        clock = clock_function_names()
        if any(r.kind != "table" and r.name.lower() in clock for r in references):
            raise QueryError(
                "guard_rejected",
                "the query reads the current date in a form that cannot be fixed in a query "
                f"the guard cannot parse ({unread.message})",
            )
    return Statement(sql, None, transpiled_from=transpiled_from)
