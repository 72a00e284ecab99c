"""The DuckDB engine: an OMOP CDM DuckDB file, read-only and sandboxed.

The file is attached READ_ONLY to an in-memory database that exposes every CDM table
present as ``cdm.<table>``, ``main.<table>`` and ``<table>``, whatever schema the file
itself uses, so gold and predicted SQL always say ``cdm.person``.  Each query's session
searches the file's CDM schema first (:meth:`DuckDBEngine.session`), so ``person`` names
the table itself, and so does ``cdm.person`` where that schema is named ``cdm``, as in
every database ``db build`` and a test suite make; views (which DuckDB binds again at
every query: a sixth of a small query's time) answer the other names.  Before any query
runs:

* spilling is off (``temp_directory = ''``): DuckDB allows reading its temp directory
  even with external access off, and no query needs to see a file of its own;
* ``enable_external_access`` is off (no COPY, ATTACH, INSTALL, extension loading) and
  the local file system is disabled (no file can be read, not even the database file
  through ``read_blob``; the attached file keeps its open handle);
* the configuration is locked (no SET, no PRAGMA that changes it).

Every query runs on a cursor of its own (a DuckDB session, closed after it), so what a
statement past both parsers could leave in the session dies with it: variables (``SET
VARIABLE``), prepared statements, the random seed (``setseed``), ``search_path``; and
no setting names a folder of the machine (home, extensions, secrets: emptied by
:func:`~score.execution.engines.resources.limit_resources`).

Every query runs in a transaction that is always rolled back, under a deadline (a
watchdog thread interrupts the connection), a row cap and a result-size cap, with the
result streamed to Arrow batch by batch.  DuckDB's errors become
:class:`~score.execution.result.QueryError` kinds; anything that fails after the watchdog fired
is a timeout, whatever DuckDB or Arrow called it.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb

from score.cdm.duckdb_file import (
    attach_read_only,
    cdm_tables_in,
    find_cdm_schema,
    quote,
    read_build_info,
)
from score.cdm.fingerprint_check import FingerprintCheck, checked_fingerprint
from score.errors import DatabaseError
from score.execution.engines import csv_reader
from score.execution.engines.base import Limits, Reference
from score.execution.engines.plan_cost import duckdb_cost
from score.execution.engines.resources import limit_resources
from score.execution.engines.result_stream import ResultStream
from score.execution.engines.watchdog import Watchdog
from score.execution.guard import article
from score.execution.parse_position import duckdb_parse_message
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings

SOURCE_ALIAS = "omop"
VIEW_SCHEMA = "cdm"


class DuckDBEngine:
    """One OMOP DuckDB file opened read-only in a sandboxed in-memory database."""

    name = "duckdb"
    dialect = "duckdb"
    session_settings = {"TimeZone": "UTC"}  # fixed in __init__, for every session

    def __init__(self, db_path: str | Path, schema: str | None, settings: ExecutorSettings) -> None:
        self.settings = settings
        self.db_path = str(db_path)
        self.broken = False  # set when the connection cannot be trusted for another query
        con = duckdb.connect(":memory:")
        try:
            limit_resources(con, settings)
            # the time zone fixed, as on every engine: what timestamptz values and their
            # casts read never depends on the machine's own
            con.execute("SET GLOBAL TimeZone = 'UTC'")
            if settings.collation:
                con.execute(f"SET default_collation = '{settings.collation}'")
            attach_read_only(con, db_path, SOURCE_ALIAS)
            self.schema = find_cdm_schema(con, SOURCE_ALIAS, schema)
            self.tables = cdm_tables_in(con, SOURCE_ALIAS, self.schema)
            if "person" not in self.tables:
                raise DatabaseError(
                    f"schema {self.schema!r} has no person table", path=self.db_path
                )
            con.execute(_views_sql(self.schema, self.tables))
            self.build_info = read_build_info(con, SOURCE_ALIAS)
            _lock_down(con)
        except BaseException:
            con.close()
            raise
        self._con = con
        self._cur = con.cursor()
        self._watchdog = Watchdog()
        # the file's CDM schema first, then the views (DuckDB finds a schema-qualified
        # name such as cdm.person only in a schema the search path names)
        views = "memory.main" if self.schema == VIEW_SCHEMA else f"memory.{VIEW_SCHEMA},memory.main"
        path = f"{quote(SOURCE_ALIAS)}.{quote(self.schema)},{views}"
        self._search_path = "SET search_path = '" + path.replace("'", "''") + "'"

    def session(self) -> duckdb.DuckDBPyConnection:
        """A cursor of its own for one query (a DuckDB session: whatever the query leaves
        in it ends when it is closed) that finds a CDM table by its name in the file's
        CDM schema before the views."""
        cur = self._con.cursor()
        try:
            cur.execute(self._search_path)
        except BaseException:
            cur.close()
            raise
        return cur

    def close(self) -> None:
        self._watchdog.close()
        self._con.close()

    # -- facts -------------------------------------------------------------------
    def stored_fingerprint(self) -> str | None:
        """Never trusted alone: :meth:`fingerprint_check` compares it with the data's."""
        return None

    def fingerprint_check(self) -> FingerprintCheck:
        """The data's fingerprint (cached only for the file's exact state) beside the one
        ``db build`` stored (:mod:`score.cdm.fingerprint_check`)."""
        return checked_fingerprint(
            self._con.cursor(), SOURCE_ALIAS, self.schema, self.db_path, self.build_info
        )

    def compute_fingerprint(self) -> str:
        return self.fingerprint_check().fingerprint

    # -- DuckDB's own parser -----------------------------------------------------
    def check(self, sql: str) -> None:
        self._statement(sql)

    def check_ahead(self, tree: object) -> bool:
        return False  # DuckDB's own parse is checked, and is what runs, in the run's process

    def _statement(self, sql: str) -> duckdb.Statement:
        """DuckDB's parse of ``sql`` if it is exactly one SELECT, else a QueryError."""
        try:
            statements = self._cur.extract_statements(sql)
        except duckdb.Error as e:
            raise QueryError("parse_error", duckdb_parse_message(str(e), sql)) from None
        if len(statements) != 1:
            raise QueryError(
                "guard_rejected", f"{len(statements)} statements; only one SELECT is allowed"
            )
        kind = statements[0].type
        if kind != duckdb.StatementType.SELECT:
            raise QueryError(
                "guard_rejected",
                f"{_statement_name(kind.name, sql)}; only a read-only SELECT is allowed",
            )
        return statements[0]

    def references(self, sql: str) -> list[Reference] | None:
        """Functions and tables of ``sql`` as DuckDB's parser reads them (its JSON
        serialisation of the statement); None if it cannot serialise them."""
        try:
            row = self._cur.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()
            tree = json.loads(row[0]) if row is not None else {"error": True}
        except (duckdb.Error, ValueError, RecursionError):
            return None
        if tree.get("error"):
            return None
        found: list[Reference] = []
        stack: list[object] = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(node)
                continue
            if not isinstance(node, dict):
                continue
            if node.get("class") == "FUNCTION" and not node.get("is_operator"):
                found.append(Reference("function", str(node.get("function_name", ""))))
            elif node.get("class") == "COLUMN_REF" and len(node.get("column_names", ())) == 1:
                # CURRENT_DATE, CURRENT_TIMESTAMP ... are column references until bound
                found.append(Reference("column", str(node["column_names"][0])))
            elif node.get("type") == "BASE_TABLE":
                found.append(
                    Reference("table", str(node.get("table_name", "")), node.get("schema_name", ""))
                )
            stack.extend(v for v in node.values() if isinstance(v, dict | list))
        return found

    # -- running -----------------------------------------------------------------
    def run(
        self, sql: str, limits: Limits, *, check: bool = True, tree: object = None
    ) -> QueryResult:
        """Run already-guarded SQL inside a transaction that is always rolled back;
        DuckDB's parser checks it first (and its parse is what runs) unless ``check`` is
        off, which only tests of the deeper layers do; sqlglot's ``tree`` is not needed."""
        query: str | duckdb.Statement = self._statement(sql) if check else sql
        cur = self.session()  # what the query leaves in its session ends with it
        try:
            cur.execute("BEGIN TRANSACTION")
            try:
                return ResultStream(cur, self._watchdog).run(query, limits)
            finally:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    self.broken = True  # the next query must not see what this one left
        finally:
            cur.close()

    def plan_cost(self, sql: str, limits: Limits) -> float:
        """The estimated cost of already-guarded SQL, planned but not run: the sum of
        the estimated cardinalities of its plan's operators
        (:func:`score.execution.engines.plan_cost.duckdb_cost`); DuckDB's parser checks it
        is one SELECT first."""
        self._statement(sql)
        cur = self.session()
        try:
            cur.execute("BEGIN TRANSACTION")
            try:
                plan = ResultStream(cur, self._watchdog).run(f"EXPLAIN (FORMAT JSON) {sql}", limits)
            finally:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    self.broken = True
        finally:
            cur.close()
        try:
            return duckdb_cost(plan.table.column(plan.num_columns - 1)[0].as_py())
        except (ValueError, IndexError) as e:
            raise QueryError("runtime_error", f"no cost estimate: {e}") from None

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """A CSV file read by a fresh sandboxed DuckDB that may read ``folder`` and
        nothing else (:mod:`score.execution.engines.csv_reader`)."""
        return csv_reader.read_csv(path, folder, self.settings, limits, self._watchdog)


def _views_sql(schema: str, tables: dict[str, str]) -> str:
    """The views of the CDM tables ``tables`` (CDM name -> its name in the file) of the
    file's ``schema``, created in one transaction: ``cdm.<table>``, the name gold SQL
    uses (unless the file's schema is ``cdm`` itself, which each query's session searches
    first), and ``main.<table>``, the same in the default schema.

    >>> for statement in _views_sql("omop", {"person": "PERSON"}).split("; "):
    ...     print(statement)
    BEGIN
    CREATE SCHEMA cdm
    CREATE VIEW cdm."person" AS SELECT * FROM "omop"."omop"."PERSON"
    CREATE VIEW main."person" AS SELECT * FROM "omop"."omop"."PERSON"
    COMMIT
    """
    targets = ("main",) if schema == VIEW_SCHEMA else (VIEW_SCHEMA, "main")
    statements = ["BEGIN", f"CREATE SCHEMA {VIEW_SCHEMA}"]
    for cdm_name, real in sorted(tables.items()):
        source = f"{quote(SOURCE_ALIAS)}.{quote(schema)}.{quote(real)}"
        statements += [
            f"CREATE VIEW {target}.{quote(cdm_name)} AS SELECT * FROM {source}"
            for target in targets
        ]
    return "; ".join([*statements, "COMMIT"])


def _statement_name(kind: str, sql: str) -> str:
    """How a refused statement is named: DuckDB calls IMPORT DATABASE a PRAGMA."""
    words = sql.split(None, 2)
    if len(words) >= 2 and words[0].upper() == "IMPORT" and words[1].upper() == "DATABASE":
        return "an IMPORT DATABASE statement"
    return article(f"{kind} statement")


def _lock_down(con: duckdb.DuckDBPyConnection) -> None:
    """No files, no network, no extension loading, no configuration changes."""
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET disabled_filesystems = 'LocalFileSystem'")
    con.execute("SET lock_configuration = true")
