"""Opening a PostgreSQL CDM for sqlgold: refusing a role that could do harm, finding the
CDM tables it can read, and pinning the session every query runs in.

A superuser, a member of ``pg_read_server_files``, ``pg_write_server_files``,
``pg_execute_server_program`` or ``pg_write_all_data``, or a role that may create in the
CDM schema or write any of its tables is refused, with the fix in one line.
"""

from __future__ import annotations

from score.errors import DatabaseError
from score.execution.settings import ExecutorSettings

_DANGEROUS_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_write_all_data",
)


def refuse_unsafe_role(conn, schema: str, where: str) -> None:
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


def cdm_tables(conn, schema: str, where: str) -> dict[str, str]:
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


#: What sqlgold fixes in every session, for determinism: the time zone (what the clock,
#: ``timestamptz`` values and their casts to ``date`` read).  Every setting that changes
#: what a query means (``DateStyle``, ``IntervalStyle``, ``standard_conforming_strings``,
#: ...) stays at the server's value; :data:`REPORTED` are read back and reported.
FIXED_SETTINGS = {"TimeZone": "UTC"}
REPORTED = ("DateStyle", "IntervalStyle", "standard_conforming_strings")


def pin_session(conn, schema: str, settings: ExecutorSettings, where: str) -> dict[str, str]:
    """Fix the session: the CDM schema first on the search path (then ``public``, as a
    server's default path and TEXT-TO-OMOP's evaluator have it), the time zone, the
    sandbox's limits, read-only transactions; the session settings that matter to a
    query's meaning, as they are (:data:`FIXED_SETTINGS` and the server's
    :data:`REPORTED` ones)."""
    import psycopg

    memory_kb = max(settings.memory_bytes // 1024, 1024)
    work_mem_kb = max(min(memory_kb // 8, 256 * 1024), 4096)
    timeout_ms = max(int(settings.timeout_seconds * 1000), 1)
    conn.execute(
        f"SET search_path = {ident(schema)}, public; SET TimeZone = 'UTC'; "
        f"SET statement_timeout = {timeout_ms}; "
        f"SET lock_timeout = {timeout_ms}; SET work_mem = {work_mem_kb}; "
        f"SET idle_in_transaction_session_timeout = {timeout_ms * 4 + 60_000}; "
        "SET default_transaction_read_only = on"
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
    shown = {name: conn.execute(f"SHOW {name}").fetchone()[0] for name in REPORTED}
    return {**FIXED_SETTINGS, **shown}


def ident(name: str) -> str:
    """A quoted PostgreSQL identifier."""
    return '"' + name.replace('"', '""') + '"'
