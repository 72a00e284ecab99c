"""A window's last ORDER BY key that no output of its SELECT can see.

The last key of a window's ORDER BY only decides the order of rows its earlier keys (and
its PARTITION BY) leave tied.  If every column the SELECT gives is one of those keys or
the window itself, and the window is one that only places rows (``ROW_NUMBER``, or
``LAG``, ``LEAD``, ``FIRST_VALUE``, ``LAST_VALUE`` of such a key, with no frame of its
own), then the rows tied are alike in every output: whichever way the tie is broken,
the SELECT returns the same rows (ROW_NUMBER's numbers and LAG's values are only
permuted among rows that look the same).  Swapping that key for another column or
flipping its direction then cannot change the result: :mod:`score.suite.equivalence`
names such an edit ``ties_unseen``.

>>> from sqlglot import parse_one, exp
>>> q = parse_one("SELECT person_id, visit_start_date, ROW_NUMBER() OVER (PARTITION BY "
...               "person_id ORDER BY visit_start_date, visit_occurrence_id) AS rn "
...               "FROM cdm.visit_occurrence")
>>> unseen_tie_key(list(q.find_all(exp.Ordered))[-1])
True
>>> unseen_tie_key(list(q.find_all(exp.Ordered))[0])  # not the last key
False
"""

from __future__ import annotations

from sqlglot import exp

#: window functions that only place rows (their value depends on a row's position and,
#: for the value functions, on a column of another row)
_PLACING = (exp.RowNumber, exp.Lag, exp.Lead, exp.FirstValue, exp.LastValue)


def unseen_tie_key(ordered: exp.Ordered) -> bool:
    """Whether ``ordered`` is the last key of a window's ORDER BY whose ties no output
    of the window's SELECT can see (see the module's docstring)."""
    order = ordered.parent
    window = order.parent if isinstance(order, exp.Order) else None
    if not isinstance(window, exp.Window) or order.expressions[-1] is not ordered:
        return False
    function = window.this
    if not isinstance(function, _PLACING) or window.args.get("spec") is not None:
        return False
    keys = {p.sql() for p in window.args.get("partition_by") or []}
    keys |= {o.this.sql() for o in order.expressions[:-1]}
    if not isinstance(function, exp.RowNumber) and (
        not isinstance(function.this, exp.Column) or function.this.sql() not in keys
    ):
        return False
    select = window.find_ancestor(exp.Select)
    if select is None or not any(p.unalias() is window for p in select.expressions):
        return False
    if any(select.args.get(k) for k in ("limit", "offset", "qualify")):
        return False  # the SELECT's own LIMIT could pick among rows that look alike
    for projection in select.expressions:
        inner = projection.unalias()
        if inner is window:
            continue
        if not isinstance(inner, exp.Column) or inner.sql() not in keys:
            return False
    return True
