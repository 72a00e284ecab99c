"""The PostgreSQL engine: an OMOP CDM in a PostgreSQL schema, read by a read-only role.

Opening (:class:`PostgresEngine`) refuses a role that could do harm, with the fix in
one line: a superuser, a member of ``pg_read_server_files``, ``pg_write_server_files``,
``pg_execute_server_program`` or ``pg_write_all_data``, or a role that may create in
the CDM schema or write any of its tables.  ``sqlgold db load`` makes such a role,
``sqlgold_reader``.  The session then pins, for every query it runs:

* ``search_path`` to the CDM schema, then ``public`` (gold and predictions say
  ``cdm.person`` or ``person``), and ``TimeZone`` UTC; every setting that changes what a
  query means (``DateStyle``, ``IntervalStyle``, ...) stays at the server's value
  (:mod:`score.execution.engines.postgres_session`);
* ``statement_timeout`` (the query's time left) and ``lock_timeout``, ``work_mem`` and
  ``temp_file_limit`` from the memory limit, ``idle_in_transaction_session_timeout``;

and runs each query in a ``READ ONLY`` transaction that is always rolled back, through a
server-side cursor from which one FETCH reads at most one row past the row cap,
converted to Arrow (NUMERIC as float, its ``Decimal`` values kept beside the table:
:attr:`~score.execution.result.QueryResult.exact_values`). Session-level advisory locks
and the random seed, what a rollback does not undo, are released and replaced before the
next query (the guard refuses taking or setting them as well:
:mod:`score.execution.engines.postgres_guard`); a ``PREPARE`` cannot run at all, a
cursor being declared only for a query. Errors become the QueryError kinds by SQLSTATE.

A query's seven statements (``BEGIN READ ONLY``, ``SET LOCAL statement_timeout``, the
advisory unlock, ``setseed``, ``DECLARE``, ``FETCH``, ``ROLLBACK``) go to the server in
one round trip, in libpq's pipeline mode (driven through psycopg's ``pgconn``, and the
rows converted by the connection's own loaders), where every statement is sent by the
extended protocol: the server itself refuses a text holding more than one command.  An
error aborts the rest of the segment, the ROLLBACK with it, and a ``ROLLBACK`` of its own ends the
transaction.
"""

from __future__ import annotations

import random
import time

import pyarrow as pa
from sqlglot import exp

from score.cdm.fingerprint_check import FingerprintCheck
from score.errors import DatabaseError
from score.execution.engines import csv_reader
from score.execution.engines.base import Limits, Reference, ServerInfo, first_line
from score.execution.engines.kinds import redact
from score.execution.engines.plan_cost import postgres_cost
from score.execution.engines.postgres_guard import DIALECT, check_postgres_tree, parse
from score.execution.engines.postgres_results import (
    classify,
    pipeline_results,
    timeout_ms,
    to_arrow,
)
from score.execution.engines.postgres_session import (
    cdm_tables,
    ident,
    pin_session,
    refuse_unsafe_role,
)
from score.execution.result import QueryError, QueryResult
from score.execution.settings import ExecutorSettings

DEFAULT_SCHEMA = "cdm"
_CURSOR = "sqlgold_query"
_ROLLBACK_TRIES = 3
_SEEDS = random.SystemRandom()  # each query's random() seed: none is left by the one before


class PostgresEngine:
    """One OMOP CDM schema in PostgreSQL, read through a read-only role."""

    name = "postgresql"
    dialect = DIALECT
    warm_up_sql = "SELECT 1"  # the query process's warm-up: the work happens in the server

    def __init__(self, url: str, schema: str | None, settings: ExecutorSettings) -> None:
        import psycopg

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
                f"cannot connect to PostgreSQL: {first_line(e)}", path=redact(url)
            ) from None
        try:
            refuse_unsafe_role(conn, self.schema, redact(url))
            self.tables = cdm_tables(conn, self.schema, redact(url))
            self.session_settings = pin_session(conn, self.schema, settings, redact(url))
            if self.session_settings.get("IntervalStyle") != "postgres":
                # psycopg reads intervals in the server's default style only: in another,
                # an interval is its text, as the server writes it
                from psycopg.types.string import TextLoader

                conn.adapters.register_loader("interval", TextLoader)
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

    def fingerprint_check(self, *, recompute: bool = False) -> FingerprintCheck:
        """The fingerprint, computed by a full pass only when a change marker moved since
        the last one (or with ``recompute``): :mod:`score.cdm.server_fingerprint`."""
        from score.cdm.server_fingerprint import checked_server_fingerprint

        return checked_server_fingerprint(
            redact(self.url),
            self.schema,
            self.change_markers,
            self.compute_fingerprint,
            recompute=recompute,
        )

    def change_markers(self) -> dict[str, list]:
        """Per CDM table, what PostgreSQL changes whenever its rows do: the storage file
        (new on TRUNCATE or a rewrite), the cumulative insert, update and delete counters,
        and the columns with their types."""
        rows = self._conn.execute(
            "SELECT c.relname, c.relfilenode::bigint, s.n_tup_ins, s.n_tup_upd, s.n_tup_del, "
            "(SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), "
            "', ' ORDER BY a.attnum) FROM pg_attribute a "
            "WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid "
            "WHERE n.nspname = %s AND c.relname = ANY(%s) ORDER BY c.relname",
            [self.schema, sorted(self.tables.values())],
        ).fetchall()
        return {str(r[0]): [None if v is None else int(v) for v in r[1:5]] + [r[5]] for r in rows}

    def compute_fingerprint(self) -> str:
        """The fingerprint (:mod:`score.cdm.fingerprint`), computed by the server: each
        table's rows hashed and their hashes sorted in SQL, so no row leaves it."""
        from score.cdm.fingerprint import POSTGRES, fingerprint_of

        def tables():
            for name in sorted(self.tables):
                qualified = f"{ident(self.schema)}.{ident(self.tables[name])}"
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
            digests = POSTGRES.digests(tables(), lambda _, sql: _one_row(self._conn, sql))
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
            table, exact = to_arrow(names, types, rows)
            if table.nbytes > limits.max_bytes:
                raise QueryError(
                    "runtime_error",
                    f"the result is over {limits.max_bytes / 2**20:g} MiB (the result size limit)",
                )
        except QueryError:
            raise
        except psycopg.Error as e:
            raise classify(e, limits) from None
        except (pa.ArrowException, ValueError, OverflowError) as e:
            raise QueryError("runtime_error", f"{type(e).__name__}: {e}"[:500]) from None
        finally:
            self._end_transaction()
        result = QueryResult.from_arrow(table)
        return QueryResult(
            result.columns,
            result.types,
            table,
            time.perf_counter() - start,
            exact_values=exact or None,
        )

    def _send_pipelined(self, sql: str, limits: Limits):
        """Send the query's seven statements and a sync in one round trip, by libpq's
        pipeline mode directly (psycopg's own pipeline costs a quarter of a millisecond
        of Python per query); the FETCH's result, or raise the server's first error.
        An error aborts the rest of the segment, the ROLLBACK with it, which
        :meth:`_end_transaction` then sends."""
        import psycopg
        from psycopg import pq

        pgconn = self._conn.pgconn
        commands = (
            b"BEGIN READ ONLY",
            f"SET LOCAL statement_timeout = {timeout_ms(limits)}".encode(),
            b"SELECT pg_advisory_unlock_all()",
            # a seed set by the query before (setseed() outlives a rollback) is replaced
            f"SELECT setseed({_SEEDS.uniform(-1.0, 1.0)!r})".encode(),
            f"DECLARE {_CURSOR} NO SCROLL CURSOR FOR {sql}".encode(self._encoding),
            f"FETCH FORWARD {limits.max_rows + 1} FROM {_CURSOR}".encode(),
            b"ROLLBACK",
        )
        pgconn.enter_pipeline_mode()
        try:
            for command in commands:
                pgconn.send_query_params(command, None)
            pgconn.pipeline_sync()
            results = pipeline_results(pgconn)
        finally:
            try:
                pgconn.exit_pipeline_mode()
            except psycopg.Error:
                self.broken = True  # results left unread: the session cannot be trusted
        for found in results:
            if found.status == pq.ExecStatus.FATAL_ERROR:
                raise psycopg.errors.error_from_result(found, encoding=self._encoding)
        if len(results) != len(commands) or results[-2].status != pq.ExecStatus.TUPLES_OK:
            raise psycopg.OperationalError(
                f"unexpected replies from the server: {[r.status.name for r in results]}"
            )
        return results[-2]

    def _rows(self, fetched) -> tuple[list[str], list[int], list[tuple]]:
        """The column names, type OIDs and rows of a FETCH's result, converted by the
        connection's own loaders (numeric as ``Decimal``)."""
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

    def plan_cost(self, sql: str, limits: Limits) -> float:
        """The estimated cost of already-guarded SQL, planned but not run: the ``Total
        Cost`` of its plan (:func:`score.execution.engines.plan_cost.postgres_cost`), in
        a READ ONLY transaction that is rolled back, under the query's time limit."""
        import psycopg

        self.check(sql)
        if self.schema != DEFAULT_SCHEMA:
            sql = _requalify(sql, self.schema)
        conn = self._conn
        try:
            conn.execute("BEGIN READ ONLY")
            conn.execute(f"SET LOCAL statement_timeout = {timeout_ms(limits)}")
            # binary results: psycopg then sends by the extended protocol, where the
            # server itself refuses a text holding more than one command
            explain = f"EXPLAIN (FORMAT JSON) {sql}".encode(self._encoding)
            row = conn.execute(explain, binary=True).fetchone()
        except psycopg.Error as e:
            raise classify(e, limits) from None
        finally:
            self._end_transaction()
        try:
            return postgres_cost(row[0] if row else None)
        except ValueError as e:
            raise QueryError("runtime_error", f"no cost estimate: {e}") from None

    def read_csv(self, path: str, folder: str, limits: Limits) -> QueryResult:
        """A CSV file read by a sandboxed in-memory DuckDB, as on every engine
        (:mod:`score.execution.engines.csv_reader`)."""
        return csv_reader.read_csv(path, folder, self.settings, limits)


def describe_postgres(
    url: str, schema: str | None = None, *, recompute: bool = False
) -> ServerInfo:
    """Tables, row counts and fingerprint of the CDM at ``url`` (read-only role); the
    fingerprint by a full pass when a change marker moved or ``recompute`` is given."""
    from score.cdm.schema import CDM_TABLES

    engine = PostgresEngine(url, schema, ExecutorSettings(timeout_seconds=3600))
    try:
        counts = []
        for name in sorted(engine.tables):
            sql = f"SELECT count(*) FROM {ident(engine.schema)}.{ident(engine.tables[name])}"
            (rows,) = _one_row(engine._conn, sql)
            counts.append((name, int(rows)))
        check = engine.fingerprint_check(recompute=recompute)
    finally:
        engine.close()
    missing = tuple(t for t in CDM_TABLES if t not in engine.tables)
    return ServerInfo(
        redact(url), engine.schema, tuple(counts), missing, check.fingerprint, check.how
    )


def _requalify(sql: str, schema: str) -> str:
    """Gold and predictions say ``cdm.person``: on a CDM in another schema, ``cdm.`` names
    that schema (unqualified names find it through the pinned ``search_path``).  Only
    the qualifiers change; the rest of the text runs as written.

    >>> _requalify("SELECT cdm.x FROM cdm.person cdm  -- cdm.person", "omop")
    'SELECT cdm.x FROM "omop".person cdm  -- cdm.person'
    """
    spans = []
    for table in parse(sql).find_all(exp.Table):
        db = table.args.get("db")
        if isinstance(db, exp.Identifier) and db.name.lower() == DEFAULT_SCHEMA:
            start, end = db.meta.get("start"), db.meta.get("end")
            if start is None or end is None:  # no position: the whole text is written anew
                return _requalify_tree(sql, schema)
            spans.append((start, end))
    if not spans:
        return sql
    parts, at = [], 0
    for start, end in sorted(spans):
        parts += [sql[at:start], ident(schema)]
        at = end + 1
    return "".join([*parts, sql[at:]])


def _requalify_tree(sql: str, schema: str) -> str:
    tree = parse(sql).copy()
    for table in tree.find_all(exp.Table):
        if table.args.get("db") is not None and table.db.lower() == DEFAULT_SCHEMA:
            table.set("db", exp.to_identifier(schema, quoted=True))
    return tree.sql(DIALECT)


def _one_row(conn, sql: str) -> tuple:
    """The one row an aggregate query returns."""
    row = conn.execute(sql).fetchone()
    if row is None:
        raise DatabaseError(f"no row from {sql[:80]!r}")
    return row
