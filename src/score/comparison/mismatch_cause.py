"""Why two results differ, where one cause explains it: a pure function of both results.

A comparator says *whether* a prediction matches; this module says *what* the difference
is when one change alone would remove it, whichever profile judged.  Each cause is tried
in a fixed order, on the rows as Python values, and the first that makes the two results
the same is named:

=================  =================================================================
cause              the results are the same once ...
=================  =================================================================
row_order          ... rows are taken in any order (the gold asks for one)
number_type        ... numbers of different types are read as numbers (1 and 1.0,
                   DECIMAL 1.10 and 1.1), for a peer that tells them apart
date_vs_timestamp  ... a DATE is read as its midnight TIMESTAMP
nan                ... NaN is taken equal to NaN (Python's == says it is not)
column_order       ... the predicted columns are put in another order
column_missing     ... the gold loses the columns the prediction lacks
column_extra       ... the prediction loses the columns the gold lacks
duplicates         ... each distinct row counts once (the same rows, other counts)
row_extra          ... the prediction loses the rows it has beyond the gold's
row_missing        ... the gold loses the rows the prediction lacks
rounding           ... numbers are rounded to d decimal places (or s significant digits):
                   the results agree to that precision and not past it
null_vs_empty      ... NULL, '' and the texts 'None', 'NA', 'null' are one value
null_vs_zero       ... NULL and 0 are one value
number_as_text     ... text that spells a number is read as that number
date_as_text       ... text that spells a date or time is read as one
bool_as_number     ... TRUE / FALSE are read as 1 / 0
letter_case        ... text is compared ignoring letter case
spaces             ... text is compared without leading and trailing spaces
rows_recombined    ... (never: every column holds the gold's values, paired in other rows)
column_values      ... one column is left out: its values differ, the others agree
=================  =================================================================

No cause is named (None) when none of these explains the difference alone, or when a
side has more than :data:`MAX_CELLS` cells (the explanation is for a person, and its cost
must not grow past the comparison's).

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["n"], [(1,), (1,), (2,)])
>>> print(mismatch_cause(gold, QueryResult.from_rows(["n"], [(1,), (2,)])))
duplicates: the same distinct rows, counted otherwise (3 gold rows, 2 predicted)
>>> x = QueryResult.from_rows(["x"], [(2.0004,)])
>>> print(mismatch_cause(x, QueryResult.from_rows(["x"], [(2.0,)])))
rounding: equal to 3 decimal places, not beyond
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from score.execution.result import QueryResult

#: Results larger than this (cells, either side) get no cause.
MAX_CELLS = 200_000
#: Column counts up to which every column order (or choice of columns) is tried.
MAX_PERMUTED = 6

CAUSES = (
    "row_order",
    "number_type",
    "date_vs_timestamp",
    "nan",
    "column_order",
    "column_missing",
    "column_extra",
    "duplicates",
    "row_extra",
    "row_missing",
    "rounding",
    "null_vs_empty",
    "null_vs_zero",
    "number_as_text",
    "date_as_text",
    "bool_as_number",
    "letter_case",
    "spaces",
    "rows_recombined",
    "column_values",
)


@dataclass(frozen=True)
class Cause:
    """A named cause (one of :data:`CAUSES`) and what it is in these results."""

    name: str
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "detail": self.detail}

    def __str__(self) -> str:
        return f"{self.name}: {self.detail}"


Row = tuple
Key = Callable[[Any], Hashable]

_NAN = ("nan",)
_EMPTY_TEXTS = frozenset({"", "none", "na", "null", "nan"})
_NUMBER_TEXT = re.compile(r"^\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$")


def _plain(v: Any) -> Hashable:
    """A cell as a value that compares as SQL would see it: numbers as numbers (any
    type), NaN equal to NaN, a midnight timestamp equal to its date; booleans, text and
    dates keep their kind.  Lists and structs become tuples."""
    if v is None:
        return None
    if isinstance(v, bool):
        return ("bool", v)
    if isinstance(v, int | Decimal | float):
        f = float(v)
        if math.isnan(f):
            return _NAN
        return ("num", int(v) if isinstance(v, int) and abs(v) > 2**53 else f)
    if isinstance(v, str):
        return ("text", v)
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        if v.time() == dt.time(0):
            return ("date", v.date())
        return ("time", v)
    if isinstance(v, dt.date):
        return ("date", v)
    if isinstance(v, list | tuple):
        return ("list", tuple(_plain(x) for x in v))
    if isinstance(v, dict):
        return ("struct", tuple((k, _plain(x)) for k, x in v.items()))
    return ("other", repr(v))


def _rounded(decimals: int | None, digits: int | None) -> Key:
    def key(v: Any) -> Hashable:
        p = _plain(v)
        if isinstance(p, tuple) and p[:1] == ("num",) and isinstance(p[1], float):
            x = p[1]
            if math.isinf(x):
                return p
            if decimals is not None:
                return ("num", round(x, decimals) + 0.0)
            assert digits is not None
            return ("num", float(f"{x:.{digits}g}"))
        return p

    return key


def _null_as_empty(v: Any) -> Hashable:
    if v is None or (isinstance(v, str) and v.strip().lower() in _EMPTY_TEXTS):
        return None
    return _plain(v)


def _null_as_zero(v: Any) -> Hashable:
    return ("num", 0.0) if v is None else _plain(v)


def _text_number(v: Any) -> Hashable:
    if isinstance(v, str) and _NUMBER_TEXT.match(v):
        return _plain(float(v))
    return _plain(v)


def _text_date(v: Any) -> Hashable:
    if isinstance(v, str):
        try:
            return _plain(dt.datetime.fromisoformat(v.strip()))
        except ValueError:
            return _plain(v)
    return _plain(v)


def _bool_number(v: Any) -> Hashable:
    return _plain(int(v)) if isinstance(v, bool) else _plain(v)


def _lower(v: Any) -> Hashable:
    return ("text", v.casefold()) if isinstance(v, str) else _plain(v)


def _stripped(v: Any) -> Hashable:
    return ("text", v.strip()) if isinstance(v, str) else _plain(v)


def _keyed(rows: Sequence[Row], key: Key, columns: Sequence[int] | None = None) -> list[tuple]:
    cols = range(len(rows[0])) if rows and columns is None else columns or ()
    return [tuple(key(r[i]) for i in cols) for r in rows]


def _same(a: list[tuple], b: list[tuple], ordered: bool) -> bool:
    return a == b if ordered else Counter(a) == Counter(b)


def mismatch_cause(
    gold: QueryResult, pred: QueryResult, *, order_matters: bool = False
) -> Cause | None:
    """The one cause that explains why ``pred`` differs from ``gold`` (see the module
    doc), or None when no single cause does (or either side is too large).  Call it for
    results a comparator found different: for equal results it names what a stricter
    peer would still tell apart, or nothing."""
    if max(r.num_rows * max(1, r.num_columns) for r in (gold, pred)) > MAX_CELLS:
        return None
    g, p = gold.rows(), pred.rows()
    gw, pw = gold.num_columns, pred.num_columns
    if gw == pw:
        return _same_width(g, p, gw, order_matters, gold.columns)
    if gw > pw:
        cols = _projection(g, p, gw, pw)
        if cols is not None:
            lost = [gold.columns[i] for i in range(gw) if i not in cols]
            return Cause("column_missing", f"the prediction lacks gold column(s) {_names(lost)}")
    else:
        cols = _projection(p, g, pw, gw)
        if cols is not None:
            more = [pred.columns[i] for i in range(pw) if i not in cols]
            return Cause("column_extra", f"the prediction has more column(s): {_names(more)}")
    return None


def _names(names: Sequence[str]) -> str:
    return ", ".join(repr(n) for n in names)


def _projection(wide: list[Row], narrow: list[Row], ww: int, nw: int) -> tuple[int, ...] | None:
    """Columns of ``wide`` (one per column of ``narrow``, in its order) whose rows are
    ``narrow``'s rows as a multiset, or None."""
    if ww > MAX_PERMUTED + 2:
        return None
    target = Counter(_keyed(narrow, _plain))
    if not narrow and not wide:
        return tuple(range(nw))
    for cols in itertools.permutations(range(ww), nw):
        if Counter(_keyed(wide, _plain, cols)) == target:
            return cols
    return None


def _same_width(
    g: list[Row], p: list[Row], width: int, ordered: bool, names: Sequence[str]
) -> Cause | None:
    gp, pp = _keyed(g, _plain), _keyed(p, _plain)
    if Counter(gp) == Counter(pp):
        if ordered and gp != pp:
            first = next(i for i, (a, b) in enumerate(zip(gp, pp, strict=True)) if a != b)
            return Cause("row_order", f"the same rows in another order (first at row {first + 1})")
        return _peer_strictness(g, p)
    order = _column_order(gp, pp, width)
    if order is not None:
        return Cause(
            "column_order",
            "the same columns in another order: predicted column(s) "
            + ", ".join(str(i + 1) for i in order)
            + " hold gold columns 1.."
            + str(width),
        )
    gset, pset = set(gp), set(pp)
    if gset == pset:
        return Cause(
            "duplicates",
            f"the same distinct rows, counted otherwise ({len(g)} gold rows, {len(p)} predicted)",
        )
    gc, pc = Counter(gp), Counter(pp)
    if not gc - pc:
        n = sum((pc - gc).values())
        return Cause("row_extra", f"the prediction has {n} row(s) more than the gold's {len(g)}")
    if not pc - gc:
        n = sum((gc - pc).values())
        return Cause("row_missing", f"the prediction lacks {n} of the gold's {len(g)} row(s)")
    for cause in _relaxed(g, p, ordered):
        return cause
    if width > 1 and all(
        Counter(r[j] for r in gp) == Counter(r[j] for r in pp) for j in range(width)
    ):
        return Cause(
            "rows_recombined",
            "every column holds the gold's values, but paired in other rows",
        )
    if width > 1:
        for j in range(width):
            rest = [i for i in range(width) if i != j]
            if _same(_keyed(g, _plain, rest), _keyed(p, _plain, rest), ordered):
                return Cause("column_values", f"column {j + 1} ({names[j]!r}) holds other values")
    return None


def _peer_strictness(g: list[Row], p: list[Row]) -> Cause | None:
    """Results equal as SQL values: what a peer comparing Python objects tells apart."""
    kinds = set()
    for a, b in zip(_cells(g), _cells(p), strict=False):
        kinds.add((_kind(a), _kind(b)))
    pairs = {frozenset(k) for k in kinds if k[0] != k[1]}
    if any(pair <= {"int", "float", "Decimal"} for pair in pairs):
        return Cause("number_type", "the same numbers as other types (such as 1 and 1.0)")
    if any(pair == {"date", "datetime"} for pair in pairs):
        return Cause("date_vs_timestamp", "a DATE against its midnight TIMESTAMP")
    if any(isinstance(v, float) and math.isnan(v) for v in _cells(g)):
        return Cause("nan", "NaN on both sides (NaN is not equal to NaN in Python)")
    return None


def _cells(rows: list[Row]):
    return (v for r in sorted(rows, key=lambda r: repr(_keyed([r], _plain))) for v in r)


def _kind(v: Any) -> str:
    return type(v).__name__


def _column_order(gp: list[tuple], pp: list[tuple], width: int) -> tuple[int, ...] | None:
    if width < 2 or width > MAX_PERMUTED:
        return None
    target = Counter(gp)
    for perm in itertools.permutations(range(width)):
        if perm == tuple(range(width)):
            continue
        if Counter(tuple(r[i] for i in perm) for r in pp) == target:
            return perm
    return None


def _relaxed(g: list[Row], p: list[Row], ordered: bool):
    """The cell-level causes whose relaxation makes the results the same, first first."""
    if any(isinstance(v, float | Decimal) for v in itertools.chain(*g, *p)):
        yield from _rounding(g, p, ordered)
    yield from _cell_causes(g, p, ordered)


def _rounding(g: list[Row], p: list[Row], ordered: bool):
    """Rounding: the finest precision (decimal places, then significant digits) at
    which the two results agree."""
    for decimals in range(12, -1, -1):
        key = _rounded(decimals, None)
        if _same(_keyed(g, key), _keyed(p, key), ordered):
            yield Cause("rounding", f"equal to {decimals} decimal places, not beyond")
            return
    for digits in range(15, 0, -1):
        key = _rounded(None, digits)
        if _same(_keyed(g, key), _keyed(p, key), ordered):
            yield Cause("rounding", f"equal to {digits} significant digits, not beyond")
            return


def _cell_causes(g: list[Row], p: list[Row], ordered: bool):
    checks: list[tuple[str, Key, str]] = [
        (
            "null_vs_empty",
            _null_as_empty,
            "NULL against '' or a text for nothing",
        ),
        ("null_vs_zero", _null_as_zero, "NULL against 0"),
        (
            "number_as_text",
            _text_number,
            "numbers against the same numbers as text",
        ),
        ("date_as_text", _text_date, "dates against the same dates as text"),
        ("bool_as_number", _bool_number, "booleans against 1 and 0"),
        ("letter_case", _lower, "the same text in another letter case"),
        ("spaces", _stripped, "the same text with other leading or trailing spaces"),
    ]
    for name, key, detail in checks:
        if _same(_keyed(g, key), _keyed(p, key), ordered):
            yield Cause(name, detail)
            return
