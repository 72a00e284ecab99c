"""Values whose text, rounding or sort order the engines' own functions give differently,
one column type per kind of the fingerprint's definition (:mod:`score.cdm.fingerprint`):
``kind -> (DuckDB type, PostgreSQL type, Spark type, values)``."""

from __future__ import annotations

import datetime as dt
import decimal

AWKWARD = {
    "integer": ("BIGINT", "bigint", "bigint", [0, -7, 9007199254740993, None]),
    "double": (
        "DOUBLE",
        "double precision",
        "double",
        [
            0.1 + 0.2,
            2.5,
            -1.0,
            1e-7,
            -1e-7,
            123456.1234565,
            0.0000005,
            1e20,
            1 / 3,
            float("nan"),
            float("inf"),
            float("-inf"),
            None,
        ],
    ),
    "decimal": (
        "DECIMAL(18, 4)",
        "numeric(18, 4)",
        "decimal(18,4)",
        [decimal.Decimal("1.2345"), decimal.Decimal("-0.0001"), None],
    ),
    "date": ("DATE", "date", "date", [dt.date(2020, 1, 2), dt.date(1900, 12, 31), None]),
    "timestamp": (
        "TIMESTAMP",
        "timestamp",
        "timestamp_ntz",
        [
            dt.datetime(2020, 1, 2),
            dt.datetime(2020, 1, 2, 3, 4, 5, 6),
            dt.datetime(1999, 12, 31, 23, 59, 59),
            None,
        ],
    ),
    "text": (
        "VARCHAR",
        "text",
        "string",
        ["plain", "tab\tand\\backslash", "\\N", "", "Ünïcode", None],
    ),
}


def duckdb_digest(kind: str) -> tuple[int, str]:
    """Row count and digest of the kind's values in DuckDB, the reference engine."""
    import duckdb

    from score.cdm.fingerprint import DUCKDB

    duck_type, _, _, values = AWKWARD[kind]
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t (v {duck_type})")
    con.executemany("INSERT INTO t VALUES (?)", [[v] for v in values])
    count, digest = con.execute(DUCKDB.digest_sql("t", [("v", duck_type)])).fetchone()
    return int(count), digest
