"""The embedded CDM replicated: every person-level row copied ``factor`` times with its ids
offset, the vocabulary and other shared tables once.  The scale figure (Spark's 1x-10x,
``bench_spark.py``) and figure 4's scaled row (``bench_curation.py``) run on such a copy,
where each gold costs more and a fixed cost per record weighs less."""

from __future__ import annotations

from pathlib import Path

import duckdb

from score.cdm.schema import VOCABULARY_TABLES

OFFSET = 10**8
#: Tables not tied to a person: copied once.
SHARED = VOCABULARY_TABLES | {
    "location",
    "care_site",
    "provider",
    "cdm_source",
    "metadata",
    "cohort_definition",
}
#: Id columns that point at shared tables: never offset.
SHARED_IDS = {"location_id", "care_site_id", "provider_id", "cohort_definition_id"}


def replicate_cdm(src: Path, out: Path, factor: int) -> None:
    """``src``'s CDM with ``factor`` copies of every person-level row (ids offset)."""
    if not 1 <= factor <= 21:  # copy k's ids are offset by k * OFFSET and stay 32-bit
        raise ValueError(f"factor {factor}: from 1 to 21 copies (32-bit ids)")
    out.unlink(missing_ok=True)
    con = duckdb.connect(str(out))
    try:
        con.execute(f"ATTACH '{src}' AS src (READ_ONLY)")
        con.execute("CREATE SCHEMA cdm")
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = 'src' "
                "AND schema_name = 'cdm' ORDER BY table_name"
            ).fetchall()
        ]
        for table in tables:
            cols = con.execute(
                "SELECT column_name, data_type FROM duckdb_columns() WHERE database_name = "
                "'src' AND schema_name = 'cdm' AND table_name = ? ORDER BY column_index",
                [table],
            ).fetchall()
            if table in SHARED:
                con.execute(f"CREATE TABLE cdm.{table} AS SELECT * FROM src.cdm.{table}")
                continue
            exprs = []
            for name, dtype in cols:
                offset = (
                    name.endswith("_id")
                    and not name.endswith("concept_id")
                    and name not in SHARED_IDS
                    and dtype in ("INTEGER", "BIGINT")
                )
                exprs.append(
                    f'CAST("{name}" + k * {OFFSET} AS {dtype}) AS "{name}"'
                    if offset
                    else f'"{name}"'
                )
            con.execute(
                f"CREATE TABLE cdm.{table} AS SELECT {', '.join(exprs)} FROM src.cdm.{table}, "
                f"range({factor}) AS r(k) ORDER BY k"
            )
    finally:
        con.close()
