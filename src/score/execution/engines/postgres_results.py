"""What a PostgreSQL query sends back, as sqlgold needs it: the replies of a pipeline read
up to its sync, the rows as Arrow, and errors as QueryError kinds by SQLSTATE.
"""

from __future__ import annotations

import time

import pyarrow as pa

from score.execution.engines.base import Limits, first_line, timeout_error
from score.execution.result import QueryError


def pipeline_results(pgconn) -> list:
    """Flush what was sent in pipeline mode and read every result up to the sync (one
    per statement: its own, or PIPELINE_ABORTED after an error), waiting on the socket;
    the connection is non-blocking, as psycopg keeps it."""
    import select

    from psycopg import pq

    sync = pq.ExecStatus.PIPELINE_SYNC
    socket = pgconn.socket
    while pgconn.flush() == 1:  # a long query text: write as the server reads
        readable, _, _ = select.select([socket], [socket], [])
        if readable:
            pgconn.consume_input()
    results: list = []
    while True:
        while pgconn.is_busy():
            select.select([socket], [], [])
            pgconn.consume_input()
        found = pgconn.get_result()
        if found is None:  # the end of one statement's results
            continue
        if found.status == sync:
            return results
        results.append(found)


#: PostgreSQL type OIDs -> Arrow types; anything else is inferred by Arrow or kept as text.
_ARROW_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    26: pa.int64(),
    700: pa.float32(),
    701: pa.float64(),
    1700: pa.float64(),  # numeric: as float (DuckDB's DOUBLE for CDM floats); exact aside
    18: pa.string(),
    19: pa.string(),
    25: pa.string(),
    1042: pa.string(),
    1043: pa.string(),
    2950: pa.string(),
    17: pa.binary(),
    1082: pa.date32(),
    1114: pa.timestamp("us"),
    1184: pa.timestamp("us", tz="UTC"),
    1083: pa.time64("us"),
    1186: pa.duration("us"),
}
_TEXT_LIKE = frozenset({114, 3802, 142, 869, 650, 829, 1560, 1562, 790})  # json, xml, inet...


#: NUMERIC's OID: psycopg loads it as ``Decimal``, the Arrow column holds it as float.
NUMERIC = 1700


def to_arrow(
    names: list[str], types: list[int], rows: list[tuple]
) -> tuple[pa.Table, dict[int, list]]:
    """Rows converted by psycopg's loaders as an Arrow table, typed by the columns' OIDs,
    and the values of the columns the table holds only approximately, by index: NUMERIC
    (``Decimal``, as the driver returns it, in the table as float).

    >>> from decimal import Decimal
    >>> table, exact = to_arrow(["n"], [NUMERIC], [(Decimal("1.10"),), (None,)])
    >>> table.column(0).to_pylist(), exact
    ([1.1, None], {0: [Decimal('1.10'), None]})
    """
    arrays = []
    exact: dict[int, list] = {}
    for j, oid in enumerate(types):
        values = [row[j] for row in rows]
        target = _ARROW_TYPES.get(oid)
        if oid == NUMERIC:
            exact[j] = values
            values = [None if v is None else float(v) for v in values]
        elif target is not None and any(isinstance(v, str) for v in values):
            target = pa.string()  # an interval the server writes in a style psycopg reads not
        if oid == 1083:
            values = [None if v is None else v.replace(tzinfo=None) for v in values]
        if target is None and oid in _TEXT_LIKE:
            values = [None if v is None else str(v) for v in values]
            target = pa.string()
        if target is None:
            try:
                arrays.append(pa.array(values))
                continue
            except (pa.ArrowException, TypeError, ValueError):
                values = [None if v is None else str(v) for v in values]
                target = pa.string()
        arrays.append(pa.array(values, type=target))
    return pa.Table.from_arrays(arrays, names=names), exact


def timeout_ms(limits: Limits) -> int:
    """The query's time left in milliseconds (0: no limit), for ``statement_timeout``."""
    if limits.deadline is None:
        return 0
    return max(int((limits.deadline - time.monotonic()) * 1000), 1)


_PARSE = {"42601", "42000"}
_CATALOG = {"42P01", "42703", "42883", "3F000", "42704"}
_GUARD = {"42501", "25006", "0A000", "2F002", "2F003", "2F004", "38002", "38003", "38004"}


def classify(e, limits: Limits) -> QueryError:
    """The QueryError kind of a psycopg error, by its SQLSTATE."""
    import psycopg

    message = first_line(e)
    state = getattr(e, "sqlstate", None) or ""
    if isinstance(e, psycopg.errors.QueryCanceled):
        return timeout_error(limits)
    if isinstance(e, psycopg.errors.LockNotAvailable):
        return QueryError("timeout", f"waited too long for a lock ({message})")
    if state in _PARSE:
        return QueryError("parse_error", message)
    if state == "42883" and "operator does not exist" in message:
        return QueryError("binder_error", message)
    if state in _CATALOG:
        return QueryError("catalog_error", message)
    if state in _GUARD:
        return QueryError("guard_rejected", f"sandbox: {message}")
    if state == "53400" or state == "53200":
        return QueryError("runtime_error", f"{message} (the memory limit)")
    if state.startswith("42"):
        return QueryError("binder_error", message)
    return QueryError("runtime_error", message)
