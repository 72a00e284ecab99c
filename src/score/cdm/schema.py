"""The OMOP Common Data Model v5.4 tables, their columns and types.

The field specification itself is data: ``cdm_v5.4.csv`` beside this module lists every
table's columns in CDM order with the CDM's own type (``integer``, ``float``, ``date``,
``datetime``, ``varchar(n)``, ``varchar(max)``) and whether the CDM marks it required
(NOT NULL).  This module reads it once and maps the CDM types to DuckDB's: ``integer``
-> INTEGER, ``float`` -> DOUBLE (the CDM's float is 64-bit), ``date`` -> DATE,
``datetime`` -> TIMESTAMP, ``varchar(n)`` -> VARCHAR.

>>> CDM_TABLES["person"][0]
('person_id', 'INTEGER', True)
>>> CDM_FIELD_TYPES["person"]["person_source_value"]
'varchar(50)'
>>> "concept_ancestor" in VOCABULARY_TABLES
True
"""

from __future__ import annotations

import csv
from pathlib import Path

CDM_VERSION = "5.4"
SPEC_FILE = Path(__file__).with_name(f"cdm_v{CDM_VERSION}.csv")

Column = tuple[str, str, bool]  # name, DuckDB type, required


def duckdb_type(cdm_type: str) -> str:
    """The DuckDB type of a CDM field type.

    >>> duckdb_type("float"), duckdb_type("varchar(50)")
    ('DOUBLE', 'VARCHAR')
    """
    if cdm_type.startswith("varchar"):
        return "VARCHAR"
    return {"integer": "INTEGER", "float": "DOUBLE", "date": "DATE", "datetime": "TIMESTAMP"}[
        cdm_type
    ]


def _read_spec(path: Path) -> dict[str, dict[str, tuple[str, bool]]]:
    tables: dict[str, dict[str, tuple[str, bool]]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            tables.setdefault(row["table"], {})[row["column"]] = (
                row["cdm_type"],
                row["required"] == "yes",
            )
    return tables


_SPEC = _read_spec(SPEC_FILE)

#: table -> column -> the CDM's own field type (``varchar(50)``, ``float``, ...), CDM order.
CDM_FIELD_TYPES: dict[str, dict[str, str]] = {
    table: {name: cdm_type for name, (cdm_type, _) in columns.items()}
    for table, columns in _SPEC.items()
}

#: table -> (column, DuckDB type, required) in CDM order.
CDM_TABLES: dict[str, tuple[Column, ...]] = {
    table: tuple((name, duckdb_type(cdm_type), req) for name, (cdm_type, req) in columns.items())
    for table, columns in _SPEC.items()
}

#: table -> column -> DuckDB type, CDM order.
CDM_COLUMN_TYPES: dict[str, dict[str, str]] = {
    table: {name: dtype for name, dtype, _ in columns} for table, columns in CDM_TABLES.items()
}

#: table -> column -> whether the CDM requires it (NOT NULL).
CDM_REQUIRED: dict[str, dict[str, bool]] = {
    table: {name: req for name, _, req in columns} for table, columns in CDM_TABLES.items()
}

#: The standardized vocabulary tables (read by ``schema_aware`` tasks).
VOCABULARY_TABLES: frozenset[str] = frozenset(
    {
        "concept",
        "vocabulary",
        "domain",
        "concept_class",
        "concept_relationship",
        "relationship",
        "concept_synonym",
        "concept_ancestor",
        "source_to_concept_map",
        "drug_strength",
    }
)


def column_names(table: str) -> tuple[str, ...]:
    """The CDM column names of ``table``, in CDM order.

    >>> column_names("death")[:2]
    ('person_id', 'death_date')
    """
    return tuple(name for name, _, _ in CDM_TABLES[table])


def create_table_sql(table: str, schema: str, *, bigint_ids: bool = False) -> str:
    """A ``CREATE TABLE`` statement for ``table`` in ``schema`` with CDM types; with
    ``bigint_ids``, its INTEGER ``*_id`` columns BIGINT (as many a CDM declares its keys).

    >>> create_table_sql("domain", "cdm").splitlines()[0]
    'CREATE TABLE "cdm"."domain" ('
    >>> create_table_sql("person", "cdm", bigint_ids=True).splitlines()[1]
    '    "person_id" BIGINT NOT NULL,'
    """
    cols = ",\n".join(
        f'    "{name}" {bigint_id_type(name, dtype) if bigint_ids else dtype}'
        f"{' NOT NULL' if required else ''}"
        for name, dtype, required in CDM_TABLES[table]
    )
    return f'CREATE TABLE "{schema}"."{table}" (\n{cols}\n)'


def bigint_id_type(name: str, dtype: str) -> str:
    """Column ``name``'s type in a CDM whose keys are BIGINT (as a suite's variants are):
    an INTEGER ``*_id`` column is BIGINT, any other keeps ``dtype``.

    >>> bigint_id_type("person_id", "INTEGER"), bigint_id_type("quantity", "INTEGER")
    ('BIGINT', 'INTEGER')
    """
    return "BIGINT" if dtype == "INTEGER" and name.endswith("_id") else dtype
