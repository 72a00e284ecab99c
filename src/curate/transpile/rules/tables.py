"""Rules about names: CDM tables live in schema ``cdm``; brackets are only quoting.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.base import apply_rule
>>> tree, _ = apply_rule(qualify_cdm_tables, parse_one("SELECT * FROM [dbo].[person]", read="tsql"))
>>> apply_rule(unquote_identifiers, tree)[0].sql("duckdb")
'SELECT * FROM cdm.person'
"""

from __future__ import annotations

import re

from sqlglot import exp

from curate.transpile.rules.annotate import CDM_SCHEMA_NAME
from curate.transpile.rules.base import acts_on
from score.cdm.schema import CDM_TABLES

#: Schema names that mean "the CDM schema" in gold SQL (SQL Server's default schema).
DEFAULT_SCHEMAS = frozenset({"dbo"})
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def cte_names(node: exp.Expression) -> set[str]:
    """The names of the CTEs visible from ``node`` (lower case).

    >>> from sqlglot import parse_one
    >>> tree = parse_one("WITH person AS (SELECT 1 AS x) SELECT * FROM person")
    >>> sorted(cte_names(tree.find(exp.Table)))
    ['person']
    """
    names: set[str] = set()
    scope = node.parent
    while scope is not None:
        with_ = scope.args.get("with_")
        if isinstance(with_, exp.With):
            names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        scope = scope.parent
    return names


def _names_a_result_column(node: exp.Identifier) -> bool:
    """Whether ``node`` is a projection alias or a column list name (the result's names)."""
    parent = node.parent
    if isinstance(parent, exp.Alias) and node.arg_key == "alias":
        return True
    return isinstance(parent, exp.TableAlias) and node.arg_key == "columns"


@acts_on(exp.Identifier)
def case_insensitive_identifiers(node: exp.Expression) -> exp.Expression:
    """SQL Server names ignore case (quoted or not): every name is written in lower case.

    So a repeated expression (``AVG(x) / 10`` ... ``ORDER BY AVG(X) / 10``) is one
    expression to every later rule.  The names a result's columns take (aliases, column
    lists) keep their case, as SQL Server and DuckDB report them.

    >>> from sqlglot import parse_one
    >>> from curate.transpile.rules.base import apply_rule
    >>> tree = parse_one("SELECT P.Year_Of_Birth AS YOB FROM [Person] P", read="tsql")
    >>> apply_rule(case_insensitive_identifiers, tree)[0].sql("duckdb")
    'SELECT p.year_of_birth AS YOB FROM "person" AS p'
    """
    if not isinstance(node, exp.Identifier) or node.this == node.this.lower():
        return node
    if _names_a_result_column(node):
        return node
    new = node.copy()
    new.set("this", node.this.lower())
    return new


@acts_on(exp.Table)
def qualify_cdm_tables(node: exp.Expression) -> exp.Expression:
    """A CDM table named without a schema (or with ``dbo``) is read from ``cdm``.

    >>> qualify_cdm_tables(exp.to_table("person")).sql()
    'cdm.person'
    >>> qualify_cdm_tables(exp.to_table("results.cohort")).sql()
    'results.cohort'
    """
    if not isinstance(node, exp.Table) or not isinstance(node.this, exp.Identifier):
        return node
    name = node.name.lower()
    if name not in CDM_TABLES or node.args.get("catalog"):
        return node
    db = node.args.get("db")
    if db is not None and db.name.lower() not in DEFAULT_SCHEMAS:
        return node
    if name in cte_names(node):
        return node
    new = node.copy()
    new.set("db", exp.to_identifier(CDM_SCHEMA_NAME))
    return new


@acts_on(exp.Identifier)
def unquote_identifiers(node: exp.Expression) -> exp.Expression:
    """``[person_id]`` / ``"person_id"`` need no quotes in DuckDB (names are case-insensitive).

    Names with spaces or other characters stay quoted; reserved words are quoted again
    by the DuckDB generator.

    >>> unquote_identifiers(exp.to_identifier("person_id", quoted=True)).sql()
    'person_id'
    >>> unquote_identifiers(exp.to_identifier("Number of persons", quoted=True)).sql()
    '"Number of persons"'
    """
    if isinstance(node, exp.Identifier) and node.quoted and _PLAIN.match(node.name):
        return exp.Identifier(this=node.name, quoted=False)
    return node
