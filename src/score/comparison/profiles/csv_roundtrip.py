"""What a result looks like to Spider 2.0 after its CSV round trip.

Spider 2.0 writes each result with pandas ``to_csv`` and reads it back with
``read_csv`` before comparing, then replaces every NaN by the integer 0.  This module
emulates that without pandas, column by column:

writing: NULL and NaN -> empty field; integers as digits (a nullable integer column
becomes float, so 1 -> '1.0'); floats by ``repr``; booleans 'True'/'False'; DECIMAL by
``str`` ('1.10'); DATE 'YYYY-MM-DD'; TIMESTAMP as pandas writes datetime64: the date
alone when every value is midnight, else 'YYYY-MM-DD HH:MM:SS' with '.fff' or
'.ffffff' when any value has a fraction, '+HH:MM' when zoned; strings as they are;
anything else by ``str``.

reading (pandas' C parser inference): pandas' default NA texts ('', 'NA', 'N/A',
'NaN', 'nan', 'null', 'NULL', 'None', '<NA>', '#N/A', ...) become missing; a column
whose other texts are all integers is int (float when something is missing), all
numbers float, all True/False booleans, else text.  Leading and trailing blanks are
allowed around numbers.

The result is a :class:`CsvColumn` per column: for every cell a tag (text, int, float,
bool), the number as float64 and the text; a missing cell is the int 0 (Spider 2.0's
``normalize``).  Each column also records the dtype ``read_csv`` gives it (``int64``,
``uint64``, ``float64``, ``bool`` or ``object``), which decides the dtype of a whole
frame (:func:`score.comparison.profiles.spider2.as_frame`): an integer column with a missing cell
is ``float64``, and so is a column with nothing but missing cells; a boolean column
with a missing cell is ``object``; integers beyond int64 are ``uint64`` when all fit in
0 .. 2**64 - 1, else ``object``.

>>> import pyarrow as pa
>>> c = csv_column(pa.array(["1", "2"]), "VARCHAR")
>>> c.tags.tolist(), c.numbers.tolist()
([1, 1], [1.0, 2.0])
>>> csv_column(pa.array(["NA", "x"]), "VARCHAR").python()
[0, 'x']
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from score.comparison.hashing import hash_strings, splitmix64
from score.comparison.python_values import python_values, timestamp_parts

TEXT, INT, FLOAT, BOOL = 0, 1, 2, 3
INT64, UINT64, FLOAT64, BOOL_, OBJECT = "int64", "uint64", "float64", "bool", "object"
NA_TEXTS = frozenset(
    {
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    }
)
_BOOLS = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}
_SALT = {
    TEXT: 0x1F83D9ABFB41BD6B,
    INT: 0x5BE0CD19137E2179,
    FLOAT: 0xCBBB9D5DC1059ED8,
    BOOL: 0x629A292A367CD507,
}


@dataclass(eq=False)
class CsvColumn:
    """One column after the round trip: per cell a tag, a number and a text, and the
    column's pandas dtype."""

    tags: np.ndarray  # int8: TEXT, INT, FLOAT or BOOL
    numbers: np.ndarray  # float64 (0.0 for text cells)
    texts: pa.Array  # string, null for number cells
    dtype: str  # what read_csv gives the column: INT64, UINT64, FLOAT64, BOOL_ or OBJECT
    ints: np.ndarray | list[int] | None = None  # exact integers of INT cells, if not
    # all of them are exact as doubles (int64 array, or Python ints beyond int64)
    order: np.ndarray | None = None  # Spider 2.0's sort of the cells, once computed

    def __len__(self) -> int:
        return len(self.tags)

    @property
    def is_number(self) -> np.ndarray:
        return self.tags != TEXT

    @cached_property
    def sorted_numbers(self) -> dict[int, np.ndarray | list[int]]:
        """Each numeric tag's values sorted (bit patterns; exact ints when present)."""
        out: dict[int, np.ndarray | list[int]] = {}
        for tag in (INT, FLOAT, BOOL):
            sel = np.flatnonzero(self.tags == tag)
            if tag == INT and self.ints is not None:
                out[tag] = sorted(int(self.ints[i]) for i in sel)
            else:
                out[tag] = np.sort(self.numbers[sel].view(np.uint64))
        return out

    @cached_property
    def sorted_number_values(self) -> np.ndarray:
        """The numeric cells (booleans as 0/1) sorted by value."""
        return np.sort(self.numbers[self.tags != TEXT])

    @cached_property
    def sorted_text_hashes(self) -> np.ndarray:
        return np.sort(self.text_hashes[0])

    @cached_property
    def text_hashes(self) -> tuple[np.ndarray, np.ndarray]:
        """Two independent 64-bit hashes of every text cell (in row order)."""
        texts = pc.filter(self.texts, pa.array(self.tags == TEXT))
        return hash_strings(texts), hash_strings(texts, seed=1)

    @cached_property
    def fingerprint(self) -> int:
        """A multiset fingerprint of (tag, value): equal columns have equal ones."""
        h = self.numbers.view(np.uint64).copy()
        is_text = self.tags == TEXT
        if is_text.any():
            h[is_text] = self.text_hashes[0]
        for tag, salt in _SALT.items():
            sel = self.tags == tag
            h[sel] = splitmix64(h[sel] ^ np.uint64(salt))
        return int(np.sum(h, dtype=np.uint64))

    @cached_property
    def sort_keys(self) -> pa.Array:
        """``str(x)`` of every cell, as Spider 2.0 sorts by it."""
        out = np.empty(len(self), dtype=object)
        for tag in (INT, FLOAT, BOOL):
            sel = np.flatnonzero(self.tags == tag)
            if not len(sel):
                continue
            vals = self.numbers[sel]
            if tag == BOOL:
                out[sel] = np.where(vals != 0, "True", "False")
            elif tag == INT and isinstance(self.ints, list):
                out[sel] = [str(self.ints[i]) for i in sel]
            elif tag == INT:
                exact = vals.astype(np.int64) if self.ints is None else self.ints[sel]
                out[sel] = pa.array(exact).cast(pa.string()).to_numpy(zero_copy_only=False)
            else:
                uniq, inv = np.unique(vals.view(np.uint64), return_inverse=True)
                reprs = np.array([repr(float(x)) for x in uniq.view(np.float64)], dtype=object)
                out[sel] = reprs[inv]
        text = np.flatnonzero(self.tags == TEXT)
        if len(text):
            out[text] = self.texts.take(pa.array(text)).to_numpy(zero_copy_only=False)
        return pa.array(out, pa.string())

    def take(self, rows: np.ndarray) -> CsvColumn:
        """The cells at ``rows`` (a tie adapter's chosen gold rows)."""
        ints = self.ints
        if ints is not None:
            ints = [ints[i] for i in rows] if isinstance(ints, list) else ints[rows]
        return CsvColumn(
            self.tags[rows],
            self.numbers[rows],
            self.texts.take(pa.array(rows, pa.int64())),
            self.dtype,
            ints,
        )

    def as_floats(self) -> CsvColumn:
        """An integer column as a float64 frame holds it: every cell ``float(x)``."""
        return CsvColumn(
            np.full(len(self), FLOAT, np.int8),
            self.numbers,
            pa.nulls(len(self), pa.string()),
            FLOAT64,
        )

    def python(self) -> list[Any]:
        """The cells as Python values (for reasons and small checks)."""
        return [self.python_at(i) for i in range(len(self))]

    def python_at(self, i: int) -> Any:
        """Cell ``i`` as the Python value Spider 2.0 compares."""
        tag = int(self.tags[i])
        if tag == TEXT:
            return self.texts[i].as_py()
        if tag == INT:
            return int(self.ints[i]) if self.ints is not None else int(self.numbers[i])
        if tag == BOOL:
            return bool(self.numbers[i])
        return float(self.numbers[i])


def csv_column(arr: pa.Array | pa.ChunkedArray, duckdb_type: str = "") -> CsvColumn:
    """One result column after ``to_csv`` / ``read_csv`` / NaN -> 0."""
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if pa.types.is_integer(t) and t != pa.uint64():  # nullable: pandas writes floats
        ints = pc.fill_null(arr, 0).cast(pa.int64()).to_numpy()
        col = _numbers(ints.astype(np.float64), valid, INT if valid.all() else FLOAT)
        if valid.all() and np.any(np.abs(ints) > 2**53):
            col.ints = ints
        return col
    if pa.types.is_floating(t):
        v = arr.cast(pa.float64()).to_numpy(zero_copy_only=False)
        return _numbers(v, valid & ~np.isnan(v), FLOAT)
    if pa.types.is_boolean(t):  # 'True'/'False', read back as booleans
        return _numbers(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), valid, BOOL)
    if pa.types.is_decimal(t) and t.scale > 0 and t.precision <= 15:
        return _numbers(_decimal_floats(arr), valid, FLOAT)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return read_texts(arr.cast(pa.string()))
    if pa.types.is_date32(t) or pa.types.is_timestamp(t):  # never read back as numbers
        texts = arr.cast(pa.string()) if pa.types.is_date32(t) else _timestamps(arr)
        tags = np.where(valid, TEXT, INT).astype(np.int8)
        return CsvColumn(tags, np.zeros(len(arr)), texts, OBJECT if valid.any() else FLOAT64)
    return read_texts(pa.array(_written_texts(arr, duckdb_type), pa.string()))


def _decimal_floats(arr: pa.Array) -> np.ndarray:
    """float(str(d)) of DECIMAL(p<=15, s) cells: the unscaled integer (exact as a double)
    divided by 10**s (exact too), so the quotient is correctly rounded like float()."""
    words = np.frombuffer(arr.buffers()[1], dtype=np.int64)
    unscaled = words[2 * arr.offset : 2 * (arr.offset + len(arr)) : 2]  # low 64 bits
    return unscaled.astype(np.float64) / 10.0**arr.type.scale


def _numbers(v: np.ndarray, present: np.ndarray, tag: int) -> CsvColumn:
    """A numeric column; a missing cell becomes the int 0."""
    tags = np.where(present, tag, INT).astype(np.int8)
    numbers = np.where(present, v, 0.0).astype(np.float64)
    return CsvColumn(tags, numbers, pa.nulls(len(v), pa.string()), _dtype(tag, present))


def _dtype(tag: int, present: np.ndarray) -> str:
    """The dtype ``read_csv`` gives a numeric column whose cells are ``tag`` where
    ``present`` and missing elsewhere."""
    if present.all():
        return {INT: INT64, FLOAT: FLOAT64, BOOL: BOOL_}[tag]
    return OBJECT if tag == BOOL and present.any() else FLOAT64


def _written_texts(arr: pa.Array, duckdb_type: str) -> list[str | None]:
    """What ``to_csv`` writes for each cell of other types: ``str`` (None for NULL)."""
    out: list[str | None] = []
    cache: dict = {}
    for v in python_values(arr, duckdb_type):
        if v is None:
            out.append(None)
            continue
        try:
            key = (type(v), v)
            if key not in cache:
                cache[key] = str(v)
            out.append(cache[key])
        except TypeError:  # lists, dicts
            out.append(str(v))
    return out


def _timestamps(arr: pa.Array) -> pa.Array:
    """Timestamps as pandas writes a datetime64 column."""
    if arr.type.tz:  # zoned: '2020-01-01 05:00:00+00:00', once per distinct value
        return pa.array(_zoned_texts(python_values(arr)), pa.string())
    seconds, frac, micros = timestamp_parts(arr)
    valid = arr.is_valid().to_numpy(zero_copy_only=False)
    if not np.any((micros % 86_400_000_000 != 0) & valid):
        return pc.cast(arr, pa.date32()).cast(pa.string())  # all midnight: the dates alone
    if not np.any(frac[valid]):
        return seconds
    ms = not np.any(frac[valid] % 1000)
    digits = pa.array(frac // 1000 if ms else frac).cast(pa.string())
    padded = pc.utf8_lpad(digits, width=3 if ms else 6, padding="0")
    return pc.binary_join_element_wise(seconds, padded, ".")


def _zoned_texts(values: list) -> list[str | None]:
    """Zoned datetimes as pandas writes them; a cell Python cannot hold (an infinity)
    as DuckDB's own text ('infinity', '-infinity'): equal to itself, to nothing finite."""
    present = [v for v in values if isinstance(v, dt.datetime)]
    frac = ""
    if any(v.microsecond for v in present):
        frac = "ms" if not any(v.microsecond % 1000 for v in present) else "us"
    out: list[str | None] = []
    for v in values:
        if v is None or not isinstance(v, dt.datetime):
            out.append(None if v is None else str(v))
            continue
        text = v.strftime("%Y-%m-%d %H:%M:%S")
        if frac == "ms":
            text += f".{v.microsecond // 1000:03d}"
        elif frac:
            text += f".{v.microsecond:06d}"
        off = v.strftime("%z")
        out.append(text + (f"{off[:3]}:{off[3:]}" if off else ""))
    return out


_INT_RE = r"^[ \t]*[+-]?[0-9]+[ \t]*$"
_FLOAT_RE = r"^[ \t]*[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity))[ \t]*$"


def read_texts(texts: pa.Array) -> CsvColumn:
    """pandas ``read_csv`` type inference on one column of written texts, then NaN -> 0."""
    n = len(texts)
    missing = pc.or_(pc.is_null(texts), pc.is_in(texts, pa.array(sorted(NA_TEXTS))))
    missing_np = missing.to_numpy(zero_copy_only=False)
    present = pc.filter(texts, pc.invert(missing))
    if len(present) == 0:  # all missing: a float column of NaN -> all 0
        return CsvColumn(np.full(n, INT, np.int8), np.zeros(n), pa.nulls(n, pa.string()), FLOAT64)
    trimmed = pc.utf8_trim(texts, characters=" \t")
    if pc.all(pc.match_substring_regex(present, _INT_RE)).as_py():
        unsigned = pc.replace_substring_regex(pc.if_else(missing, "0", trimmed), r"^\+", "")
        try:
            ints = unsigned.cast(pa.int64()).to_numpy()
        except pa.ArrowInvalid:  # beyond int64: Python's ints
            values = [int(t) for t in unsigned.to_pylist()]
            unsigned64 = not missing_np.any() and all(0 <= v < 2**64 for v in values)
            return CsvColumn(
                np.full(n, INT, np.int8),
                np.array(values, dtype=np.float64),
                pa.nulls(n, pa.string()),
                UINT64 if unsigned64 else OBJECT,
                values if not missing_np.any() else None,
            )
        if not missing_np.any():
            col = CsvColumn(
                np.full(n, INT, np.int8), ints.astype(np.float64), pa.nulls(n, pa.string()), INT64
            )
            if np.any(np.abs(ints) > 2**53):
                col.ints = ints
            return col
        return _numbers(ints.astype(np.float64), ~missing_np, FLOAT)
    if pc.all(pc.match_substring_regex(present, _FLOAT_RE)).as_py():
        floats = pc.if_else(missing, "0", trimmed).cast(pa.float64()).to_numpy()
        return _numbers(floats, ~missing_np, FLOAT)
    if pc.all(pc.is_in(present, pa.array(list(_BOOLS)))).as_py():
        truth = pc.is_in(texts, pa.array(["True", "TRUE", "true"])).to_numpy(zero_copy_only=False)
        return CsvColumn(
            np.where(missing_np, INT, BOOL).astype(np.int8),
            np.where(missing_np, 0.0, truth.astype(np.float64)),
            pa.nulls(n, pa.string()),
            _dtype(BOOL, ~missing_np),
        )
    tags = np.where(missing_np, INT, TEXT).astype(np.int8)
    return CsvColumn(
        tags, np.zeros(n), pc.if_else(missing, pa.scalar(None, pa.string()), texts), OBJECT
    )
