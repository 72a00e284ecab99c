"""Constructs a gold query must not contain, refused with a reason before any rule runs.

>>> from sqlglot import parse_one
>>> reject_unsupported(parse_one("SELECT a INTO #x FROM t", read="tsql"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
curate.transpile.rules.base.TranspileError: [transpile] SELECT ... INTO writes a table; ...
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import TranspileError

#: SQL Server functions with no DuckDB counterpart that sqlgold can write faithfully.
UNSUPPORTED_FUNCTIONS = frozenset(
    {
        "PATINDEX",
        "DATALENGTH",
        "STR",
        "CHOOSE",
        "SOUNDEX",
        "DIFFERENCE",
        "OBJECT_ID",
        "DB_NAME",
        "HOST_NAME",
        "NEWSEQUENTIALID",
    }
)


def _is_temp_table(table: exp.Table) -> bool:
    ident = table.this
    return isinstance(ident, exp.Identifier) and (
        bool(ident.args.get("temporary") or ident.args.get("global_")) or ident.name.startswith("#")
    )


def _reason(node: exp.Expression) -> tuple[str, str] | None:
    """Why ``node`` cannot be part of a gold query (check name, message), or None."""
    if isinstance(node, exp.Select) and node.args.get("into"):
        return "select_into", "SELECT ... INTO writes a table; a gold query only reads"
    if isinstance(node, exp.Table) and _is_temp_table(node):
        return "temp_table", f"temporary table {node.sql('tsql')}: make the script one query"
    if isinstance(node, (exp.Parameter, exp.Placeholder, exp.SessionParameter)):
        return "parameter", f"unresolved parameter {node.sql('tsql')}"
    if isinstance(node, exp.Limit):
        options = node.args.get("limit_options")
        if options is not None and options.args.get("percent"):
            return "top_percent", "TOP n PERCENT rounds up in SQL Server, LIMIT n PERCENT down"
    if isinstance(node, exp.Anonymous) and node.name.upper() in UNSUPPORTED_FUNCTIONS:
        return "function", f"{node.name.upper()}() has no faithful DuckDB translation"
    if isinstance(node, exp.NumberToStr):
        return "function", "FORMAT of a number follows .NET format strings"
    if isinstance(node, exp.CurrentTimestampLTZ):
        return "function", "SYSDATETIMEOFFSET() depends on the server's time zone"
    return None


#: The classes :func:`_reason` can refuse: any other node is passed over at once.
_CHECKED = (exp.Select, exp.Table, exp.Parameter, exp.Placeholder, exp.SessionParameter)
_CHECKED += (exp.Limit, exp.Anonymous, exp.NumberToStr, exp.CurrentTimestampLTZ)


def reject_unsupported(tree: exp.Expression) -> None:
    """Raise TranspileError if ``tree`` is not a single read-only query sqlgold can translate."""
    if isinstance(tree, exp.Command):
        raise TranspileError(f"cannot parse {tree.name!r} as a query", rule="reject:statement")
    if not isinstance(tree, exp.Query):
        raise TranspileError(
            f"a gold query is one SELECT, not {tree.key.upper()}", rule="reject:statement"
        )
    for node in tree.walk():
        reason = _reason(node) if isinstance(node, _CHECKED) else None
        if reason:
            raise TranspileError(reason[1], rule=f"reject:{reason[0]}")
