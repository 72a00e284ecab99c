"""Differences the transpile cannot settle from the SQL alone, reported as warnings.

* Collation.  SQL Server's default collation (SQL_Latin1_General_CP1_CI_AS) ignores case
  (and trailing spaces in ``=``) when it compares, groups, sorts or searches text; DuckDB
  compares bytes.  Whether that changes a result depends on the data ('Male' vs 'MALE'),
  so the transpile does not rewrite comparisons: it says where the query depends on it,
  and the verify stage can run the gold SQL again under DuckDB's
  ``SET default_collation = 'nocase'`` and keep the task only if both results agree.
* Untyped division.  ``a / b`` whose operand types are unknown (a table outside the CDM)
  stays DuckDB division, which is exact where SQL Server's integer division truncates.

>>> from sqlglot import parse_one
>>> from curate.transpile.rules.annotate import annotate
>>> sql = "SELECT person_id FROM cdm.person WHERE gender_source_value = 'M'"
>>> hazards(annotate(parse_one(sql, read="tsql"), "tsql"))
("collation: compares text with letters (gender_source_value = 'M'); SQL Server ignores case",)
"""

from __future__ import annotations

from sqlglot import exp

from curate.transpile.rules.base import is_string, is_unknown

_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.In, exp.Between)
_SEARCHES = (exp.Like, exp.ILike, exp.StrPosition, exp.Replace, exp.RegexpLike)


def _snippet(node: exp.Expression, width: int = 60) -> str:
    text = node.sql("tsql")
    return text if len(text) <= width else text[: width - 3] + "..."


def _has_letters(node: exp.Expression) -> bool:
    return any(
        lit.is_string and any(c.isalpha() for c in lit.this) for lit in node.find_all(exp.Literal)
    )


def _text_operands(node: exp.Expression) -> list[exp.Expression]:
    return [child for child in node.iter_expressions() if is_string(child)]


def _compares_text(node: exp.Expression) -> bool:
    if not isinstance(node, (*_SEARCHES, *_COMPARISONS)):
        return False
    operands = _text_operands(node)
    if not any(not isinstance(o, exp.Literal) for o in operands):
        return False
    if isinstance(node, _SEARCHES):
        return _has_letters(node)
    literals = [c for c in node.iter_expressions() if isinstance(c, exp.Literal)]
    return _has_letters(node) or (len(operands) >= 2 and not literals)


def _groups_text(node: exp.Expression) -> exp.Expression | None:
    """A text expression that is grouped, sorted, made distinct or compared by MIN/MAX."""
    if isinstance(node, (exp.Group, exp.Order)):
        keys = [k.this if isinstance(k, exp.Ordered) else k for k in node.expressions]
        return next((k for k in keys if is_string(k)), None)
    if isinstance(node, exp.Select) and node.args.get("distinct"):
        return next((p for p in node.expressions if is_string(p.unalias())), None)
    if isinstance(node, (exp.Min, exp.Max)) and is_string(node.this):
        return node.this
    if isinstance(node, exp.SetOperation) and node.args.get("distinct", True):
        selects = node.left.selects if isinstance(node.left, exp.Query) else []
        return next((p for p in selects if is_string(p.unalias())), None)
    return None


#: The classes a hazard can be found on: any other node is passed over at once.
_CHECKED = (*_SEARCHES, *_COMPARISONS, exp.Group, exp.Order, exp.Select, exp.Min, exp.Max)
_CHECKED += (exp.SetOperation, exp.Div)


def _untyped_division(node: exp.Expression) -> bool:
    return isinstance(node, exp.Div) and (is_unknown(node.this) or is_unknown(node.expression))


def hazards(
    tree: exp.Expression, *, collation: bool = True, division: bool = True
) -> tuple[str, ...]:
    """Warnings about ``tree`` (annotated, before rules), in a stable order without repeats.

    ``collation`` warnings are for SQL Server only (PostgreSQL and Oracle compare text as
    DuckDB does); ``division`` ones wherever integer division truncates (not Oracle).
    """
    found: dict[str, None] = {}
    for node in tree.walk():
        if not isinstance(node, _CHECKED):
            continue
        if not collation:
            pass
        elif _compares_text(node):
            found[
                f"collation: compares text with letters ({_snippet(node)}); SQL Server ignores case"
            ] = None
        text = _groups_text(node) if collation else None
        if text is not None:
            found[
                f"collation: groups or sorts text ({_snippet(text)}); SQL Server ignores case there"
            ] = None
        if division and _untyped_division(node):
            found[
                f"division: cannot tell whether {_snippet(node)} divides integers; "
                "left as DuckDB division"
            ] = None
    return tuple(found)
