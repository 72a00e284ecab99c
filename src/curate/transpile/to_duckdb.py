"""Transpile gold SQL (SQL Server, PostgreSQL or DuckDB) to DuckDB that returns the same result.

sqlglot does the translation; named fix-up rules (:data:`curate.transpile.rules.RULES`) repair what
sqlglot's output would compute differently.  The query is parsed once, checked
(:func:`curate.transpile.rules.reject.reject_unsupported`), its CDM tables qualified to ``cdm.``,
annotated with SQL Server types once (on a copy, so the original layout survives), then
each rule is applied in order.  Anything that cannot be carried over faithfully raises
:class:`TranspileError` with the reason.

>>> transpile("SELECT TOP 5 gender_concept_id, COUNT(*) / 2 AS half FROM person "
...           "GROUP BY gender_concept_id ORDER BY 2 DESC", pretty=True).sql.splitlines()[:3]
['SELECT', '  gender_concept_id,', '  COUNT(*) // 2 AS half']
>>> transpile("SELECT AVG(year_of_birth) FROM cdm.person").rules
('avg_of_integers',)
>>> transpile("SELECT * FROM person", read="duckdb").sql
'SELECT * FROM cdm.person'
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
import sqlglot.dialects.duckdb  # noqa: F401 - the target: loaded now, not by the first transpile
from sqlglot import exp
from sqlglot.errors import ErrorLevel, ParseError, SqlglotError, TokenError
from sqlglot.schema import Schema
from sqlglot.tokens import TokenType

from curate.transpile.rules import KNOWN_LIMITS, RULES, apply_rules, parse_rules_used
from curate.transpile.rules.annotate import CannotAnnotate, annotate
from curate.transpile.rules.base import TranspileError
from curate.transpile.rules.hazards import hazards
from curate.transpile.rules.reject import reject_unsupported
from curate.transpile.rules.tsql_dialect import SqlgoldTSQL
from score.execution.guard import statements_of
from score.execution.parse_position import near, plain_sqlglot_message

__all__ = ["KNOWN_LIMITS", "READS", "RULES", "Transpiled", "TranspileError", "transpile"]

#: The dialects gold SQL can be read from, and the sqlglot dialect that reads each.
READS: dict[str, type[sqlglot.Dialect] | str] = {
    "tsql": SqlgoldTSQL,
    "postgres": "postgres",
    "oracle": "oracle",
    "duckdb": "duckdb",
}


@dataclass(frozen=True)
class Transpiled:
    """DuckDB SQL, the rules that changed it, and warnings about what no rule could settle."""

    sql: str
    rules: tuple[str, ...]
    warnings: tuple[str, ...] = ()


def transpile(
    sql: str,
    read: str = "tsql",
    schema: Schema | dict | None = None,
    *,
    pretty: bool = False,
    tree: exp.Expr | None = None,
) -> Transpiled:
    """Translate one gold query from ``read`` into DuckDB SQL with the same result.

    ``schema`` maps ``{schema: {table: {column: type}}}`` (DuckDB type names); the default
    is the CDM v5.4 under schema ``cdm``.  DuckDB input passes through unchanged after a
    parse check (only unqualified CDM tables are qualified).  ``tree``, when given, is
    the query already read by ``read``'s reader (:data:`READS`; a tree the transpile may
    change), and ``sql`` is not parsed.
    """
    if read not in READS:
        raise TranspileError(f"cannot read dialect {read!r}; use one of {sorted(READS)}")
    if tree is None:
        tree = _parse(sql, read)
    reject_unsupported(tree)
    tree, fired = apply_rules(tree, read, "names")
    if read == "duckdb":
        text = _generate(tree, pretty) if fired else _without_semicolon(sql)
        return Transpiled(text, fired)
    try:
        tree = annotate(tree, read, schema)
        warnings = hazards(tree, collation=read == "tsql", division=read != "oracle")
    except CannotAnnotate as error:
        warnings = (f"types: cannot annotate the query ({error}); type-based rules did not run",)
    tree, typed_fired = apply_rules(tree, read, "types")
    rules = parse_rules_used(tree) + fired + typed_fired
    return Transpiled(_generate(tree, pretty), rules, warnings)


def _parse(sql: str, read: str) -> exp.Expression:
    try:
        statements = statements_of(sqlglot.parse(sql, read=READS[read]))
    except ParseError as error:
        first = error.errors[0] if error.errors else {}
        where = ""
        if first.get("line") and first.get("col"):
            lines = sql.splitlines() or [""]
            text = lines[min(first["line"], len(lines)) - 1]
            start = max(first["col"] - len(first.get("highlight") or "") + 1, 1)
            where = " " + near(text, first["line"], start)
        raise TranspileError(
            f"sqlglot cannot parse the {read} SQL: "
            f"{plain_sqlglot_message(str(first.get('description', error)))}{where}",
            rule="parse",
            line=first.get("line"),
        ) from error
    except (TokenError, SqlglotError) as error:
        raise TranspileError(
            f"sqlglot cannot parse the {read} SQL: {plain_sqlglot_message(str(error))}",
            rule="parse",
        ) from error
    if len(statements) != 1:
        raise TranspileError(
            f"expected one statement, found {len(statements)}", rule="reject:statement"
        )
    return statements[0]


def _generate(tree: exp.Expression, pretty: bool) -> str:
    try:
        # the tree is not used again: the generator may change it instead of a copy
        return tree.sql(
            dialect="duckdb", pretty=pretty, unsupported_level=ErrorLevel.RAISE, copy=False
        )
    except SqlglotError as error:
        raise TranspileError(
            f"sqlglot cannot write this in DuckDB: {error}", rule="generate"
        ) from error


def _without_semicolon(sql: str) -> str:
    """The SQL text as given, without surrounding space and a final semicolon."""
    tokens = sqlglot.tokenize(sql, read="duckdb")
    if tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        sql = sql[: tokens[-1].start]
    return sql.strip()
