"""A result's content hash, defined on values so every engine gives the same one.

``gold_result.sha256`` pins what a task's gold returned when it was verified: scoring
re-checks it, and a changed database or engine shows as a different hash.  Two engines
return the same data with different types (DuckDB's ``AVG`` is DOUBLE where
PostgreSQL's is NUMERIC, DuckDB's ``SUM`` of integers is HUGEINT where PostgreSQL's is
BIGINT, ``date + INTERVAL`` is a TIMESTAMP in DuckDB and a DATE elsewhere), so the hash
is taken over a canonical form of each *value*, never its type:

======================  ==========================================================
value                   canonical form (a JSON value)
======================  ==========================================================
NULL                    ``null``
integer, DECIMAL,       ``["n", text]``: an integral value below 2^53 in magnitude (or
FLOAT, DOUBLE           any integer type's value) exactly (``"12"``, ``"-3"``); any
                        other finite number rounded half-even to 12 significant digits
                        and printed without exponent or trailing zeros (``"2.5"``,
                        ``"0.333333333333"``); ``"nan"``, ``"inf"``, ``"-inf"``
BOOLEAN                 ``["b", true]`` (not a number: sqlgold tells TRUE from 1)
text, UUID              ``["s", text]``
DATE                    ``["d", "YYYY-MM-DD"]`` (any year, from the day count)
TIMESTAMP               a midnight timestamp is its DATE; else ``["t",
                        "YYYY-MM-DDTHH:MM:SS.ffffff"]`` (with a time zone: in UTC)
TIME                    ``["h", "HH:MM:SS.ffffff"]``
INTERVAL, duration      ``["i", months, days, microseconds]``
BLOB                    ``["x", hex]``
LIST / STRUCT / MAP     ``["l", [...]]`` / ``["m", {field: value}]`` / ``["p", [[k, v]...]]``
======================  ==========================================================

Column names are left out (engines fold unquoted names differently); column order is
kept.  A row is the JSON array of its values; when row order does not matter the rows
are sorted as text.  The hash is the sha256 of the format line, the column count and
the rows, one per line.

>>> from score.execution.result import QueryResult
>>> a = QueryResult.from_rows(["n"], [(2.5,), (1,)])
>>> b = QueryResult.from_rows(["N"], [(1,), (2.5,)])
>>> result_sha256(a, ordered=False) == result_sha256(b, ordered=False)
True
>>> result_sha256(a, ordered=True) == result_sha256(b, ordered=True)
False
>>> canonical_rows(QueryResult.from_rows(["a", "b"], [(1 / 3, "x")]))
['[["n","0.333333333333"],["s","x"]]']
"""

from __future__ import annotations

import decimal
import hashlib
import json
import math
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from score.execution.result import QueryResult

RESULT_HASH_FORMAT = "sqlgold.result-hash/1"
SIGNIFICANT_DIGITS = 12
_EXACT_LIMIT = 2**53
_CONTEXT = decimal.Context(prec=SIGNIFICANT_DIGITS, rounding=decimal.ROUND_HALF_EVEN)
_MICROS_PER_DAY = 86_400_000_000
_UNIT_MICROS = {"s": 1_000_000, "ms": 1_000, "us": 1, "ns": None}


def result_sha256(result: QueryResult, *, ordered: bool) -> str:
    """The canonical hash of ``result``; ``ordered`` keeps the row order.

    >>> from score.execution.result import QueryResult
    >>> r = QueryResult.from_rows(["a"], [(1,)])
    >>> len(result_sha256(r, ordered=False))
    64
    """
    rows = canonical_rows(result)
    if not ordered:
        rows.sort()
    digest = hashlib.sha256()
    digest.update(f"{RESULT_HASH_FORMAT}\n{result.num_columns}\n".encode())
    for row in rows:
        digest.update(row.encode("utf-8", "surrogatepass"))
        digest.update(b"\n")
    return digest.hexdigest()


def canonical_rows(result: QueryResult) -> list[str]:
    """Each row's canonical form as compact JSON text, in the result's order."""
    columns = [canonical_values(result.table.column(i)) for i in range(result.num_columns)]
    if not columns:
        return ["[]"] * result.num_rows
    return [
        json.dumps(list(row), ensure_ascii=False, separators=(",", ":"))
        for row in zip(*columns, strict=True)
    ]


def canonical_values(arr: pa.Array | pa.ChunkedArray) -> list[Any]:
    """The canonical form (a JSON value) of every cell of one column."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    valid = arr.is_valid().to_pylist()
    if pa.types.is_null(t):
        return [None] * len(arr)
    if pa.types.is_integer(t):
        values = _each(arr.to_pylist(), lambda v: ["n", str(v)])
    elif pa.types.is_floating(t) or pa.types.is_decimal(t):
        values = _each(arr.to_pylist(), lambda v: ["n", number_text(v)])
    elif pa.types.is_boolean(t):
        values = _each(arr.to_pylist(), lambda v: ["b", v])
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        values = _each(arr.to_pylist(), lambda v: ["s", v])
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        values = _each(arr.to_pylist(), lambda v: ["x", v.hex()])
    elif pa.types.is_date(t):
        days = pc.cast(arr, pa.date32()).cast(pa.int32()).to_pylist()
        values = _each(days, lambda d: ["d", date_text(d)])
    elif pa.types.is_timestamp(t):
        values = [_timestamp(m) for m in _micros(arr)]
    elif pa.types.is_time(t):
        values = [["h", _clock(m)] for m in _micros(arr)]
    elif pa.types.is_duration(t):
        values = [["i", 0, 0, m] for m in _micros(arr)]
    elif pa.types.is_interval(t):
        values = [
            ["i", v.months, v.days, v.nanoseconds // 1000] if v is not None else None
            for v in arr.to_pylist()
        ]
    elif pa.types.is_map(t):
        offsets = arr.offsets.to_pylist()
        entries = arr.values.slice(offsets[0], offsets[-1] - offsets[0]).flatten()
        keys, items = (canonical_values(child) for child in entries)
        pairs = [[k, v] for k, v in zip(keys, items, strict=True)]
        values = _nested(arr, lambda a, b: ["p", pairs[a:b]])
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        inner = canonical_values(arr.flatten())
        values = _nested(arr, lambda a, b: ["l", inner[a:b]])
    elif pa.types.is_struct(t):
        children = arr.flatten()  # offset-adjusted, one array per field
        fields = [(t.field(i).name, canonical_values(c)) for i, c in enumerate(children)]
        values = [["m", {name: vals[i] for name, vals in fields}] for i in range(len(arr))]
    else:  # a type with no canonical form yet: its text, tagged with the type
        values = [[str(t), str(v)] for v in arr.to_pylist()]
    return [v if ok else None for v, ok in zip(values, valid, strict=True)]


def number_text(value: int | float | decimal.Decimal) -> str:
    """A number's canonical text (see the module docstring).

    >>> number_text(2.0), number_text(decimal.Decimal("2.5000")), number_text(1 / 3)
    ('2', '2.5', '0.333333333333')
    >>> number_text(float("nan")), number_text(-float("inf")), number_text(-0.0)
    ('nan', '-inf', '0')
    >>> number_text(123456789012.75)
    '123456789013'
    """
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        exact = decimal.Decimal(repr(value))
    else:
        if value.is_nan():
            return "nan"
        if value.is_infinite():
            return "inf" if value > 0 else "-inf"
        exact = value
    if exact == exact.to_integral_value() and abs(exact) < _EXACT_LIMIT:
        return str(int(exact))
    rounded = _CONTEXT.plus(exact).normalize(_CONTEXT)
    if rounded.is_zero():
        return "0"
    return format(rounded, "f")


def date_text(days: int) -> str:
    """The ISO date ``days`` after 1970-01-01, for any year (no Python date limits).

    >>> date_text(0), date_text(-1), date_text(2932896)
    ('1970-01-01', '1969-12-31', '9999-12-31')
    >>> date_text(106_000_000)
    '292188-02-22'
    """
    # Howard Hinnant's days-to-civil algorithm, in integers.
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    sign = "-" if year < 0 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def _timestamp(micros: int | None) -> list[Any] | None:
    if micros is None:
        return None
    days, rest = divmod(micros, _MICROS_PER_DAY)
    if rest == 0:
        return ["d", date_text(days)]
    return ["t", f"{date_text(days)}T{_clock(rest)}"]


def _clock(micros: int | None) -> str | None:
    if micros is None:
        return None
    seconds, frac = divmod(micros, 1_000_000)
    minutes, sec = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours:02d}:{minute:02d}:{sec:02d}.{frac:06d}"


def _micros(arr: pa.Array) -> list[int | None]:
    """Microseconds of a timestamp, time or duration column (UTC for time zones)."""
    unit = arr.type.unit
    width = pa.int32() if pa.types.is_time32(arr.type) else pa.int64()
    raw = arr.cast(width).to_pylist()
    if unit == "ns":
        return [None if v is None else v // 1000 for v in raw]
    factor = _UNIT_MICROS[unit]
    return [None if v is None else v * factor for v in raw]


def _each(values: list[Any], make: Any) -> list[Any]:
    return [None if v is None else make(v) for v in values]


def _nested(arr: pa.Array, make: Any) -> list[Any]:
    """One canonical value per list-like cell, from its offsets into the flat child."""
    if pa.types.is_fixed_size_list(arr.type):
        size = arr.type.list_size
        return [make(i * size, (i + 1) * size) for i in range(len(arr))]
    offsets = arr.offsets.to_pylist()
    base = offsets[0]
    return [make(offsets[i] - base, offsets[i + 1] - base) for i in range(len(arr))]
