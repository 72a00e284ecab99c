"""The PostgreSQL engine: an OMOP CDM in a PostgreSQL schema, read by a read-only role.

Opening (:class:`PostgresEngine`) refuses a role that could do harm, with the fix in
one line: a superuser, a member of ``pg_read_server_files``, ``pg_write_server_files``,
``pg_execute_server_program`` or ``pg_write_all_data``, or a role that may create in
the CDM schema or write any of its tables.  ``sqlgold db load`` makes such a role,
``sqlgold_reader``.  The session then pins, for every query it runs:

* ``search_path`` to the CDM schema (gold and predictions say ``cdm.person`` or
  ``person``), ``TimeZone`` UTC, ``DateStyle`` ISO;
* ``statement_timeout`` (the query's time left) and ``lock_timeout``, ``work_mem`` and
  ``temp_file_limit`` from the memory limit, ``idle_in_transaction_session_timeout``;

and runs each query in a ``READ ONLY`` transaction that is always rolled back, through
a server-side cursor from which one FETCH reads at most one row past the row cap,
converted to Arrow.  Session-level advisory locks, the one thing a rollback does not
undo, are released before the next query (the guard refuses taking them as well:
:mod:`score.execution.engines.postgres_guard`).  Errors become the QueryError kinds by SQLSTATE.

A query's six statements (``BEGIN READ ONLY``, ``SET LOCAL statement_timeout``, the
advisory unlock, ``DECLARE``, ``FETCH``, ``ROLLBACK``) go to the server in one round trip,
in libpq's pipeline mode (driven through psycopg's ``pgconn``, and the rows converted by
the connection's own loaders), where every statement is sent by the extended protocol:
the server itself refuses a text holding more than one command.  An error aborts the
rest of the segment, the ROLLBACK with it, and a ``ROLLBACK`` of its own ends the
transaction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pyarrow as pa
from sqlglot import exp

from score.errors import DatabaseError
from score.execution.engines import Limits, Reference
from score.execution.engines.postgres_guard import DIALECT, check_postgres_tree, parse
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings

DEFAULT_SCHEMA = "cdm"
URL_SCHEMES = ("postgresql://", "postgres://")
_CURSOR = "sqlgold_query"
_ROLLBACK_TRIES = 3
_DANGEROUS_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_write_all_data",
)


def is_postgres_url(db: object) -> bool:
    """
    >>> is_postgres_url("postgresql://reader@localhost/omop"), is_postgres_url("x.duckdb")
    (True, False)
    """
    return isinstance(db, str) and db.startswith(URL_SCHEMES)


def redact(url: str) -> str:
    """A URL fit to print: the password replaced.

    >>> redact("postgresql://reader:s3cret@db:5432/omop")
    'postgresql://reader:***@db:5432/omop'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user, _, host = parts.netloc.rpartition("@")
    return url.replace(parts.netloc, f"{user.split(':')[0]}:***@{host}", 1)


class PostgresEngine:
    """One OMOP CDM schema in PostgreSQL, read through a read-only role."""

    name = "postgresql"
    dialect = DIALECT
    warm_up_sql = "SELECT 1"  # the query process's warm-up: the work happens in the server

    def __init__(self, url: str, schema: str | None, settings: ExecutorSettings) -> None:
        import psycopg
        from psycopg.types.numeric import FloatLoader

        self.settings = settings
        self.url = url
        self.schema = schema or DEFAULT_SCHEMA
        self.broken = False
        try:
            # prepare_threshold None: psycopg would prepare the statements every query
            # repeats (BEGIN, the unlock, FETCH, ROLLBACK) server-side after five uses;
            # a pipeline whose DECLARE fails skips such a PREPARE that psycopg records
            # as done, and every later query failed ('prepared statement "_pg3_4" does
            # not exist')
            conn = psycopg.connect(
                url,
                autocommit=True,
                connect_timeout=10,
                application_name="sqlgold",
                prepare_threshold=None,
            )
        except psycopg.Error as e:
            raise DatabaseError(
                f"cannot connect to PostgreSQL: {_first_line(e)}", path=redact(url)
            ) from None
        try:
            conn.adapters.register_loader("numeric", FloatLoader)
            _refuse_unsafe_role(conn, self.schema, redact(url))
            self.tables = _cdm_tables(conn, self.schema, redact(url))
            _pin_session(conn, self.schema, settings, redact(url))
            # transactions are begun and ended by the statements sent (autocommit stays
            # on, so psycopg adds no BEGIN of its own): each is READ ONLY, rolled back
        except BaseException:
            conn.close()
            raise
        self._conn = conn
        self._encoding = conn.info.encoding
        self._loader = psycopg.adapt.Transformer(conn)

    def close(self) -> None:
        self._conn.close()

    # -- facts -------------------------------------------------------------------
    def stored_fingerprint(self) -> str | None:
        return None

    def compute_fingerprint(self) -> str:
        """The fingerprint (:mod:`score.cdm.fingerprint`), computed by the server: each
        table's rows hashed and their hashes sorted in SQL, so no row leaves it."""
        from score.cdm.fingerprint import POSTGRES, fingerprint_of

        def tables():
            for name in sorted(self.tables):
                qualified = f"{_ident(self.schema)}.{_ident(self.tables[name])}"
                columns = self._conn.execute(
                    "SELECT a.attname, format_type(a.atttypid, NULL) FROM pg_attribute a "
                    "WHERE a.attrelid = %s::regclass AND a.attnum > 0 AND NOT a.attisdropped "
                    "ORDER BY a.attnum",
                    [qualified],
                ).fetchall()
                yield name, qualified, columns

        self._conn.execute("BEGIN READ ONLY")
        try:
            self._conn.execute("SET LOCAL statement_timeout = 0")
            self._conn.execute("SET LOCAL extra_float_digits = 1")  # shortest float text
            digests = POSTGRES.digests(tables(), lambda _, sql: self._conn.execute(sql).fetchone())
        finally:
            self._conn.execute("ROLLBACK")
        return fingerprint_of(digests)

    # -- checking ----------------------------------------------------------------
    def check(self, sql: str) -> None:
        """One read-only SELECT by sqlglot's PostgreSQL reading, nothing refused by name."""
        check_postgres_tree(parse(sql))

    def check_ahead(self, tree: object) -> bool:
        """The check reads sqlglot's tree only, so it can be done where the guard parsed."""
        if not isinstance(tree, exp.Expression):
            return False
        check_postgres_tree(tree)
        return True

    def references(self, sql: str) -> list[Reference] | None:
        return None  # no parser of PostgreSQL's own runs in the client

    # -- running -----------------------------------------------------------------
    def run(
        self, sql: str, limits: Limits, *, check: bool = True, tree: object = None
    ) -> QueryResult:
        """Run already-guarded SQL in a READ ONLY transaction that is always rolled back;
        the PostgreSQL guard (:meth:`check`) reads it first unless ``check`` is off (it was
        done ahead, :meth:`check_ahead`, or a test of the deeper layers); it reads
        ``tree``, sqlglot's PostgreSQL parse of ``sql``, when the caller has it: the text
        is then not parsed twice."""
        import psycopg

        if check and not self.check_ahead(tree):
            self.check(sql)
        start = time.perf_counter()
        if self.schema != DEFAULT_SCHEMA:
            sql = _requalify(sql, self.schema)
        try:
            fetched = self._send_pipelined(sql, limits)
            names, types, rows = self._rows(fetched)
            if len(rows) > limits.max_rows:
                raise QueryError("row_cap", f"more than {limits.max_rows} rows (the row cap)")
            table = _to_arrow(names, types, rows)
            if table.nbytes > limits.max_bytes:
                raise QueryError(
                    "runtime_error",
                    f"the result is over {limits.max_bytes / 2**20:g} MiB (the result size limit)",
                )
        except QueryError:
            raise
        except psycopg.Error as e:
            raise _classify(e, limits) from None
        except (pa.ArrowException, ValueError, OverflowError) as e:
            raise QueryError("runtime_error", f"{type(e).__name__}: {e}"[:500]) from None
        finally:
            self._end_transaction()
        result = QueryResult.from_arrow(table)
        return QueryResult(result.columns, result.types, table, time.perf_counter() - start)

    def _send_pipelined(self, sql: str, limits: Limits):
        """Send the query's six statements and a sync in one round trip, by libpq's
        pipeline mode directly (psycopg's own pipeline costs a quarter of a millisecond
        of Python per query); the FETCH's result, or raise the server's first error.
        An error aborts the rest of the segment, the ROLLBACK with it, which
        :meth:`_end_transaction` then sends."""
        import psycopg
        from psycopg import pq

        pgconn = self._conn.pgconn
        commands = (
            b"BEGIN READ ONLY",
            f"SET LOCAL statement_timeout = {_timeout_ms(limits)}".encode(),
            b"SELECT pg_advisory_unlock_all()",
            f"DECLARE {_CURSOR} NO SCROLL CURSOR FOR {sql}".encode(self._encoding),
            f"FETCH FORWARD {limits.max_rows + 1} FROM {_CURSOR}".encode(),
            b"ROLLBACK",
        )
        pgconn.enter_pipeline_mode()
        try:
            for command in commands:
                pgconn.send_query_params(command, None)
            pgconn.pipeline_sync()
            results = _pipeline_results(pgconn)
        finally:
            try:
                pgconn.exit_pipeline_mode()
            except psycopg.Error:
                self.broken = True  # results left unread: the session cannot be trusted
        for found in results:
            if found.status == pq.ExecStatus.FATAL_ERROR:
                raise psycopg.errors.error_from_result(found, encoding=self._encoding)
        if len(results) != len(commands) or results[4].status != pq.ExecStatus.TUPLES_OK:
            raise psycopg.OperationalError(
                f"unexpected replies from the server: {[r.status.name for r in results]}"
            )
        return results[4]

    def _rows(self, fetched) -> tuple[list[str], list[int], list[tuple]]:
        """The column names, type OIDs and rows of a FETCH's result, converted by the
        connection's own loaders (numeric as float)."""
        if fetched.nfields == 0:
            raise QueryError("guard_rejected", "the statement returned no result set")
        names = [fetched.fname(i).decode(self._encoding) for i in range(fetched.nfields)]
        types = [fetched.ftype(i) for i in range(fetched.nfields)]
        self._loader.set_pgresult(fetched)
        return names, types, self._loader.load_rows(0, fetched.ntuples, tuple)

    def _end_transaction(self) -> None:
        """Roll back what an error left open (the pipeline's own ROLLBACK did not run);
        a connection that cannot be brought back to idle is not used again.

        PostgreSQL may fail the first ROLLBACK with the error that ended the query: a
        cursor whose FETCH overran ``temp_file_limit`` reports it again while the
        rollback drops it, and the transaction stays aborted; the next ROLLBACK ends
        it.  So it is tried up to :data:`_ROLLBACK_TRIES` times."""
        import psycopg

        conn = self._conn
        idle = psycopg.pq.TransactionStatus.IDLE
        for _ in range(_ROLLBACK_TRIES):
            if conn.info.transaction_status == idle:
                return
            try:
                conn.execute("ROLLBACK")
            except psycopg.Error:
                if conn.closed:
                    break
        if conn.info.transaction_status != idle:
            self.broken = True  # the next query must not see what this one left

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """A CSV file read by a sandboxed in-memory DuckDB (as the DuckDB engine does)."""
        import duckdb

        from score.execution.engines.duckdb import _limit_resources, _sql_string, _Stream, _Watchdog

        con = duckdb.connect(":memory:")
        watchdog = _Watchdog()
        try:
            _limit_resources(con, self.settings)
            con.execute("SET allowed_directories = [?]", [str(Path(folder)) + "/"])
            con.execute("SET enable_external_access = false")
            con.execute("SET lock_configuration = true")
            sql = f"SELECT * FROM read_csv({_sql_string(path)}, header = true)"
            return _Stream(con, watchdog).run(sql, limits)
        finally:
            watchdog.close()
            con.close()


@dataclass(frozen=True)
class PostgresInfo:
    where: str  # the URL, password redacted
    schema: str
    tables: tuple[tuple[str, int], ...]  # (CDM table, rows)
    missing: tuple[str, ...]
    fingerprint: str


def describe_postgres(url: str, schema: str | None = None) -> PostgresInfo:
    """Tables, row counts and fingerprint of the CDM at ``url`` (read-only role)."""
    from score.cdm.schema import CDM_TABLES

    engine = PostgresEngine(url, schema, ExecutorSettings(timeout_seconds=3600))
    try:
        counts = []
        for name in sorted(engine.tables):
            sql = f"SELECT count(*) FROM {_ident(engine.schema)}.{_ident(engine.tables[name])}"
            (rows,) = engine._conn.execute(sql).fetchone()
            counts.append((name, int(rows)))
        fingerprint = engine.compute_fingerprint()
    finally:
        engine.close()
    missing = tuple(t for t in CDM_TABLES if t not in engine.tables)
    return PostgresInfo(redact(url), engine.schema, tuple(counts), missing, fingerprint)


def _requalify(sql: str, schema: str) -> str:
    """Gold and predictions say ``cdm.person``: on a CDM in another schema, ``cdm.`` names
    that schema (unqualified names find it through the pinned ``search_path``)."""
    from sqlglot import exp

    tree = parse(sql).copy()
    changed = False
    for table in tree.find_all(exp.Table):
        if table.args.get("db") is not None and table.db.lower() == DEFAULT_SCHEMA:
            table.set("db", exp.to_identifier(schema, quoted=True))
            changed = True
    return tree.sql(DIALECT) if changed else sql


# -- opening -------------------------------------------------------------------------


def _refuse_unsafe_role(conn, schema: str, where: str) -> None:
    user, superuser = conn.execute(
        "SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user"
    ).fetchone()
    fix = (
        "connect as a read-only role instead (`sqlgold db load` creates sqlgold_reader; "
        "see the README's PostgreSQL section)"
    )
    if superuser:
        raise DatabaseError(f"role {user!r} is a superuser; {fix}", path=where)
    for role in _DANGEROUS_ROLES:
        (member,) = conn.execute(
            "SELECT pg_has_role(current_user, %s, 'USAGE') OR "
            "pg_has_role(current_user, %s, 'MEMBER')",
            [role, role],
        ).fetchone()
        if member:
            raise DatabaseError(f"role {user!r} is a member of {role}; {fix}", path=where)
    (exists,) = conn.execute(
        "SELECT count(*) FROM pg_namespace WHERE nspname = %s", [schema]
    ).fetchone()
    if not exists:
        raise DatabaseError(f"schema {schema!r} not found (choose one with --schema)", path=where)
    (creates,) = conn.execute("SELECT has_schema_privilege(%s, 'CREATE')", [schema]).fetchone()
    if creates:
        raise DatabaseError(
            f"role {user!r} may create objects in schema {schema!r}; {fix}", path=where
        )
    writable = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND "
        "has_table_privilege(c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER') "
        "ORDER BY 1 LIMIT 1",
        [schema],
    ).fetchone()
    if writable:
        raise DatabaseError(f"role {user!r} may write to {schema}.{writable[0]}; {fix}", path=where)


def _cdm_tables(conn, schema: str, where: str) -> dict[str, str]:
    from score.cdm.schema import CDM_TABLES

    rows = conn.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v', 'm', 'f') "
        "AND has_table_privilege(c.oid, 'SELECT')",
        [schema],
    ).fetchall()
    present = {r[0].lower(): r[0] for r in rows}
    if "person" not in present:
        raise DatabaseError(f"schema {schema!r} has no person table this role can read", path=where)
    return {t: present[t] for t in CDM_TABLES if t in present}


def _pin_session(conn, schema: str, settings: ExecutorSettings, where: str) -> None:
    import psycopg

    memory_kb = max(settings.memory_bytes // 1024, 1024)
    work_mem_kb = max(min(memory_kb // 8, 256 * 1024), 4096)
    timeout_ms = max(int(settings.timeout_seconds * 1000), 1)
    conn.execute(
        f"SET search_path = {_ident(schema)}; SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; "
        f"SET IntervalStyle = 'iso_8601'; SET statement_timeout = {timeout_ms}; "
        f"SET lock_timeout = {timeout_ms}; SET work_mem = {work_mem_kb}; "
        f"SET idle_in_transaction_session_timeout = {timeout_ms * 4 + 60_000}; "
        "SET default_transaction_read_only = on; "
        "SET cursor_tuple_fraction = 1.0"
    )
    try:
        conn.execute(f"SET temp_file_limit = {memory_kb}")
    except psycopg.errors.InsufficientPrivilege:
        (current,) = conn.execute("SELECT current_setting('temp_file_limit')").fetchone()
        if current in ("-1", ""):
            raise DatabaseError(
                "the role may not set temp_file_limit and has none; as an administrator run "
                "`GRANT SET ON PARAMETER temp_file_limit TO <role>` (PostgreSQL 15+) or "
                "`ALTER ROLE <role> SET temp_file_limit = '4GB'`",
                path=where,
            ) from None


# -- results -------------------------------------------------------------------------


def _pipeline_results(pgconn) -> list:
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
    results = []
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
    1700: pa.float64(),  # numeric: loaded as float (DuckDB's DOUBLE for CDM floats)
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


def _to_arrow(names: list[str], types: list[int], rows: list[tuple]) -> pa.Table:
    arrays = []
    for j, oid in enumerate(types):
        values = [row[j] for row in rows]
        target = _ARROW_TYPES.get(oid)
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
    return pa.Table.from_arrays(arrays, names=_unique(names))


def _unique(names: list[str]) -> list[str]:
    """Arrow keeps duplicate names; kept as they are (comparators match by position)."""
    return list(names)


def _timeout_ms(limits: Limits) -> int:
    if limits.deadline is None:
        return 0
    return max(int((limits.deadline - time.monotonic()) * 1000), 1)


# -- errors --------------------------------------------------------------------------

_PARSE = {"42601", "42000"}
_CATALOG = {"42P01", "42703", "42883", "3F000", "42704"}
_GUARD = {"42501", "25006", "0A000", "2F002", "2F003", "2F004", "38002", "38003", "38004"}


def _classify(e, limits: Limits) -> QueryError:
    import psycopg

    message = _first_line(e)
    state = getattr(e, "sqlstate", None) or ""
    if isinstance(e, psycopg.errors.QueryCanceled):
        return QueryError("timeout", f"stopped after {limits.timeout_seconds:g} s (the time limit)")
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


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
