"""Labels that carry an integer column: ``CAST(concept_id AS TEXT) || ' - ' || concept_name``.

A text built by ``||`` whose first part is an integer column (or its cast to text) and
whose second part is a string literal that does not begin with a digit holds that
column's value: an integer's text is an optional minus sign and digits, so it ends
where the literal begins, and two labels that are equal begin with the same integer.
When no part is ever NULL (``||`` gives NULL if one is), no two rows with different
values of the column share a label.  So an output that is such a label counts, for the
unique keys of a result (:func:`score.suite.row_guarantees.output_keys`), as the column
itself: ``SELECT DISTINCT`` over the label of a concept and its vocabulary selects
distinct rows already.

This module reads the shape alone; whether the first column is an integer and the
other parts are never NULL is for the caller, who knows the SELECT's sources.

>>> from sqlglot import parse_one
>>> label = parse_one("CAST(c.concept_id AS TEXT) || ' - ' || c.concept_name")
>>> first, rest = label_parts(label)
>>> first.sql(), [c.sql() for c in rest]
('c.concept_id', ['c.concept_name'])
>>> label_parts(parse_one("c.concept_id || '5' || c.concept_name")) is None  # '12'+'5' = '1'+'25'
True
>>> label_parts(parse_one("c.concept_id || c.concept_name")) is None  # '1'+'2a' = '12'+'a'
True
"""

from __future__ import annotations

from sqlglot import exp

#: text types a cast of the integer column may name
_TEXT_TYPES = frozenset({exp.DataType.Type.TEXT, exp.DataType.Type.VARCHAR})


def _flat(node: exp.Expr) -> list[exp.Expr]:
    """The operands of a chain of ``||``, left to right."""
    if isinstance(node, exp.DPipe):
        return _flat(node.this) + _flat(node.expression)
    return [node.unnest() if isinstance(node, exp.Paren) else node]


def _column(node: exp.Expr) -> exp.Column | None:
    """``x`` or ``CAST(x AS TEXT)``: the column ``x``."""
    if isinstance(node, exp.Cast) and node.to.this in _TEXT_TYPES:
        node = node.this
    return node if isinstance(node, exp.Column) else None


def label_parts(node: exp.Expr) -> tuple[exp.Column, list[exp.Column]] | None:
    """The column a label begins with and the columns in its other parts, if ``node``
    is a label of that shape (every part after the first two a column or a string
    literal); else None."""
    parts = _flat(node)
    if len(parts) < 2:
        return None
    first = _column(parts[0])
    separator = parts[1]
    if first is None or not (isinstance(separator, exp.Literal) and separator.is_string):
        return None
    if not separator.name or separator.name[0].isdigit():
        return None
    rest: list[exp.Column] = []
    for part in parts[2:]:
        if isinstance(part, exp.Literal) and part.is_string:
            continue
        column = _column(part)
        if column is None:
            return None
        rest.append(column)
    return first, rest
