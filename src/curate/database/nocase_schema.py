"""The CDM's case-insensitive twin on PostgreSQL: schema ``<schema>_nocase``.

SQL Server's default collation ignores case; curation runs a gold whose transpile warns
about text comparison, grouping or sorting a second time under a case-insensitive
collation and keeps it only if both results agree (:mod:`curate.verify.nocase`).  DuckDB
does that with one session setting (``default_collation = 'nocase'``); PostgreSQL has
no such setting, so ``sqlgold db load`` builds what stands for it: a view per CDM table
in schema ``cdm_nocase`` that returns the table's rows with every text column under
``cdm_nocase.nocase``, an ICU collation that ignores case but not accents
(``und-u-ks-level2``, nondeterministic: ``'Male' = 'MALE'``, one group for both), as
SQL Server's ``SQL_Latin1_General_CP1_CI_AS`` does.  Queries naming ``cdm.person`` read
the view when the executor is opened on that schema (the engine names the schema for
``cdm.``), so every comparison, ``GROUP BY``, ``DISTINCT``, ``ORDER BY`` and ``MIN``/
``MAX`` of a column sees the collation through the column, as on SQL Server.

``sqlgold_reader`` gets ``USAGE`` on the schema and ``SELECT`` on its views, nothing else.
"""

from __future__ import annotations

NOCASE_SUFFIX = "_nocase"
COLLATION = "nocase"
#: ICU: case-insensitive, accent-sensitive (level 2), as SQL Server's CI_AS collations.
ICU_LOCALE = "und-u-ks-level2"
_TEXT_TYPES = ("character varying", "text", "character")


def nocase_schema(schema: str) -> str:
    """The twin of CDM schema ``schema``.

    >>> nocase_schema("cdm")
    'cdm_nocase'
    """
    return schema + NOCASE_SUFFIX


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def view_sql(schema: str, table: str, columns: list[tuple[str, str]]) -> str:
    """The twin view of ``schema.table``: its text columns under the collation.

    >>> sql = view_sql("cdm", "person", [("person_id", "integer"), ("race", "text")])
    >>> sql.split(" AS SELECT ")[1]
    '"person_id", "race" COLLATE "cdm_nocase"."nocase" AS "race" FROM "cdm"."person"'
    """
    twin = _ident(nocase_schema(schema))
    collation = f"{twin}.{_ident(COLLATION)}"
    items = [
        f"{_ident(c)} COLLATE {collation} AS {_ident(c)}" if t in _TEXT_TYPES else _ident(c)
        for c, t in columns
    ]
    return (
        f"CREATE VIEW {twin}.{_ident(table)} AS SELECT {', '.join(items)} "
        f"FROM {_ident(schema)}.{_ident(table)}"
    )


def drop_nocase_schema(pg, schema: str) -> None:
    """Drop the twin (before its tables are replaced: the views depend on them)."""
    pg.execute(f"DROP SCHEMA IF EXISTS {_ident(nocase_schema(schema))} CASCADE")


def create_nocase_schema(pg, schema: str, reader: str) -> None:
    """Create the twin of every table in ``schema`` and let ``reader`` read it (in the
    caller's transaction)."""
    twin = _ident(nocase_schema(schema))
    drop_nocase_schema(pg, schema)
    pg.execute(f"CREATE SCHEMA {twin}")
    pg.execute(
        f"CREATE COLLATION {twin}.{_ident(COLLATION)} "
        f"(provider = icu, locale = '{ICU_LOCALE}', deterministic = false)"
    )
    rows = pg.execute(
        "SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c "
        "JOIN information_schema.tables t ON t.table_schema = c.table_schema "
        "AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE' "
        "WHERE c.table_schema = %s ORDER BY c.table_name, c.ordinal_position",
        [schema],
    ).fetchall()
    tables: dict[str, list[tuple[str, str]]] = {}
    for table, column, data_type in rows:
        tables.setdefault(table, []).append((column, data_type))
    for table, columns in tables.items():
        pg.execute(view_sql(schema, table, columns))
    pg.execute(f"GRANT USAGE ON SCHEMA {twin} TO {_ident(reader)}")
    pg.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {twin} TO {_ident(reader)}")
