"""The first rows of an instance's two results, kept in its record for people to read.

A scoring run keeps no result, only its verdict; a person reviewing a wrong answer
wants to see what came back.  :func:`result_preview` keeps the first rows of the gold
and the predicted result (cells as text, long ones cut) with their sizes, and for a
mismatch the rows that differ as :func:`score.comparison.result_diff.diff_results`
finds them (``verify`` shows the same), so the review page can mark them.  It is
written as the record's ``preview`` (``schemas/results.schema.json``).

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["n"], [(1,), (2,)])
>>> pred = QueryResult.from_rows(["n"], [(1,), (3,)])
>>> p = result_preview(gold, pred, match=False, order_matters=False)
>>> p["gold"]["rows"], p["predicted"]["total"], p["missing"], p["extra"]
([['1'], ['2']], 2, [['2']], [['3']])
>>> wide = QueryResult.from_rows([f"c{i}" for i in range(20)], [tuple(range(20))])
>>> side = result_preview(wide, None, match=False, order_matters=False)["gold"]
>>> len(side["columns"]), side["rows"][0][-1], side["total_columns"]
(16, '15', 20)
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.cells import OutOfRange, python_list
from score.comparison.profiles.base import Verdict
from score.comparison.result_diff import diff_results
from score.comparison.values import show
from score.execution.result import QueryResult

#: rows and columns of each result kept, and the longest cell text kept
ROWS = 5
COLUMNS = 16
CELL = 80
#: results larger than this are not diffed for the preview (the verdict stands alone)
DIFF_MAX_ROWS = 20_000


def cell(value: Any) -> str:
    """A cell as the page shows it: text unquoted, others as a reason shows them."""
    text = value if isinstance(value, (str, OutOfRange)) else show(value)
    text = str(text)  # an OutOfRange as DuckDB writes it ('infinity')
    return text if len(text) <= CELL else text[: CELL - 1] + "…"


def _side(result: QueryResult, rows: int, *, order_matters: bool = True) -> dict[str, Any]:
    """The first ``rows`` rows of the first :data:`COLUMNS` columns (a wider result says
    how many columns it has); where order does not matter, the first in sorted order
    (:func:`_first_sorted`), not in the order the engine happened to return."""
    table = result.table.slice(0, rows) if order_matters else _first_sorted(result.table, rows)
    if table.num_columns > COLUMNS:
        table = table.select(list(range(COLUMNS)))
    columns = [python_list(table.column(i)) for i in range(table.num_columns)]
    side: dict[str, Any] = {
        "columns": list(result.columns[:COLUMNS]),
        "rows": [[cell(c[i]) for c in columns] for i in range(table.num_rows)],
        "total": result.num_rows,
    }
    if result.num_columns > COLUMNS:
        side["total_columns"] = result.num_columns
    return side


def _first_sorted(table: pa.Table, rows: int) -> pa.Table:
    """The first ``rows`` rows of ``table`` sorted on every column (NULLs last), so an
    unordered result previews the same rows however the engine ordered it; a table too
    large to sort here (over :data:`DIFF_MAX_ROWS`) or with values Arrow cannot sort is
    cut as it is.

    >>> _first_sorted(pa.table({"a": [3, None, 1], "b": ["x", "y", "z"]}), 2).to_pydict()
    {'a': [1, 3], 'b': ['z', 'x']}
    """
    if table.num_rows <= 1 or table.num_rows > DIFF_MAX_ROWS or table.num_columns == 0:
        return table.slice(0, rows)
    names = [f"c{i}" for i in range(table.num_columns)]  # a result may repeat a name
    keys = [(name, "ascending", "at_end") for name in names]
    try:
        named = table.rename_columns(names)
        order = pc.sort_indices(named, sort_keys=keys)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
        return table.slice(0, rows)
    return table.take(order[:rows])


def result_preview(
    gold: QueryResult | None,
    predicted: QueryResult | None,
    *,
    match: bool,
    order_matters: bool,
    rows: int = ROWS,
    verdict: Verdict | None = None,
) -> dict[str, Any]:
    """The first ``rows`` of each result and, when they do not match, the rows that differ;
    ``verdict`` is the ``sqlgold`` profile's verdict when the run used that profile (the
    diff then does not compare the pair again)."""
    out: dict[str, Any] = {}
    if gold is not None:
        out["gold"] = _side(gold, rows, order_matters=order_matters)
    if predicted is not None:
        out["predicted"] = _side(predicted, rows, order_matters=order_matters)
    small = (
        gold is not None
        and predicted is not None
        and max(gold.num_rows, predicted.num_rows) <= DIFF_MAX_ROWS
    )
    if not match and small:
        assert gold is not None and predicted is not None
        try:
            d = diff_results(
                gold, predicted, order_matters=order_matters, limit=rows, verdict=verdict
            )
        except Exception:  # noqa: BLE001 - values the diff cannot handle: rows alone
            return out
        out["missing"] = [[cell(v) for v in r] for r in d.missing]
        out["missing_count"] = d.missing_count
        out["extra"] = [[cell(v) for v in r] for r in d.extra]
        out["extra_count"] = d.extra_count
        out["columns"] = [[link.gold_name, link.pred_name, link.how] for link in d.links]
        if d.out_of_order is not None:
            out["out_of_order_row"] = d.out_of_order[0] + 1
    return out
