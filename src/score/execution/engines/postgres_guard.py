"""PostgreSQL's part of the statement guard: what only a PostgreSQL server could do.

The engine-independent guard (:mod:`score.execution.guard`, here with sqlglot's ``postgres``
dialect) already admits only one read-only SELECT and refuses ``COPY``, ``SET``, DDL,
DML and ``SELECT ... INTO``.  On PostgreSQL a SELECT can still reach outside its
transaction through functions, so these are refused by name (unquoted and
case-folded, schema ignored):

* files and large objects: ``pg_read_file``, ``pg_ls_dir``, ``lo_import``, ...;
* other sessions and the server: ``pg_terminate_backend``, ``pg_cancel_backend``,
  ``pg_reload_conf``, ``pg_notify``, ...;
* state that outlives a rolled-back transaction: advisory locks, sequences;
* settings: ``set_config`` (``current_setting`` is refused by the base guard);
* other databases and SQL text: ``dblink*``, ``query_to_xml`` and its family;

as are row locks (``FOR UPDATE``/``FOR SHARE``) and catalog views that show other
sessions, settings, files or passwords.

>>> check_postgres_tree(parse("SELECT * FROM cdm.person FOR UPDATE"))
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: FOR UPDATE/FOR SHARE locks rows; only reading is allowed
>>> check_postgres_tree(parse("SELECT pg_catalog.SET_CONFIG('work_mem', '1TB', false)"))
Traceback (most recent call last):
...
score.execution.result.QueryError: guard_rejected: function set_config() changes the session's settings
>>> check_postgres_tree(parse("SELECT count(*) FROM cdm.person"))
"""  # noqa: E501 (doctest exception lines name the module)

from __future__ import annotations

from sqlglot import exp

from score.execution.guard import check_statement
from score.execution.result import QueryError

DIALECT = "postgres"

_FILE_FUNCTIONS = frozenset(
    {
        "pg_read_file",
        "pg_read_binary_file",
        "pg_stat_file",
        "pg_file_write",
        "pg_file_rename",
        "pg_file_unlink",
        "pg_logdir_ls",
        "pg_current_logfile",
        "pg_import_system_collations",
    }
)
_FILE_PREFIXES = ("pg_ls_", "lo_", "pg_read_")
_LARGE_OBJECT_FUNCTIONS = frozenset({"loread", "lowrite"})

_SERVER_FUNCTIONS = frozenset(
    {
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_promote",
        "pg_switch_wal",
        "pg_create_restore_point",
        "pg_backup_start",
        "pg_backup_stop",
        "pg_notify",
        "pg_logical_emit_message",
        "pg_log_backend_memory_contexts",
        "pg_stat_reset",
        "pg_stat_reset_shared",
        "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters",
        "pg_stat_reset_slru",
        "pg_stat_reset_replication_slot",
        "pg_stat_reset_subscription_stats",
        "pg_replication_origin_create",
        "pg_replication_origin_drop",
        "pg_drop_replication_slot",
        "pg_create_physical_replication_slot",
        "pg_create_logical_replication_slot",
        "pg_wal_replay_pause",
        "pg_wal_replay_resume",
        "nextval",
        "setval",
        "txid_current",
        "pg_current_xact_id",
    }
)
_ADVISORY_PREFIXES = ("pg_advisory_", "pg_try_advisory_")
_SETTING_FUNCTIONS = frozenset({"set_config"})
_OTHER_DATABASE_PREFIXES = ("dblink",)
_SQL_TEXT_FUNCTIONS = frozenset(
    {
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "table_to_xml",
        "table_to_xmlschema",
        "table_to_xml_and_xmlschema",
        "schema_to_xml",
        "schema_to_xmlschema",
        "schema_to_xml_and_xmlschema",
        "database_to_xml",
        "database_to_xmlschema",
        "database_to_xml_and_xmlschema",
    }
)

#: Catalog views that show other sessions' queries, settings, files or passwords.
PRIVILEGED_VIEWS = frozenset(
    {
        "pg_stat_activity",
        "pg_settings",
        "pg_file_settings",
        "pg_hba_file_rules",
        "pg_ident_file_mappings",
        "pg_authid",
        "pg_shadow",
        "pg_user_mappings",
        "pg_user_mapping",
        "pg_largeobject",
        "pg_stat_statements",
        "pg_config",
    }
)


def refused_postgres_function(name: str) -> str | None:
    """Why calling ``name`` on PostgreSQL is refused, or None.

    >>> refused_postgres_function("PG_ADVISORY_LOCK")
    'function pg_advisory_lock() takes an advisory lock that outlives the query'
    >>> refused_postgres_function("lo_import")
    'function lo_import() reads or writes server files or large objects'
    >>> refused_postgres_function("lower") is None
    True
    """
    name = name.lower()
    if name in _FILE_FUNCTIONS | _LARGE_OBJECT_FUNCTIONS or name.startswith(_FILE_PREFIXES):
        return f"function {name}() reads or writes server files or large objects"
    if name.startswith(_ADVISORY_PREFIXES):
        return f"function {name}() takes an advisory lock that outlives the query"
    if name in _SETTING_FUNCTIONS:
        return f"function {name}() changes the session's settings"
    if name in _SERVER_FUNCTIONS:
        return f"function {name}() acts on the server or other sessions"
    if name.startswith(_OTHER_DATABASE_PREFIXES):
        return f"function {name}() reaches another database"
    if name in _SQL_TEXT_FUNCTIONS:
        return f"function {name}() runs SQL given as text"
    return None


def parse(sql: str) -> exp.Expr:
    """``sql`` through the base guard with the PostgreSQL dialect."""
    return check_statement(sql, DIALECT)


def check_postgres_tree(tree: exp.Expr) -> None:
    """Refuse what the base guard admits but PostgreSQL must not run (see the module)."""
    for node in tree.walk():
        if isinstance(node, exp.Lock):
            raise QueryError(
                "guard_rejected", "FOR UPDATE/FOR SHARE locks rows; only reading is allowed"
            )
        if isinstance(node, exp.Func):
            reason = refused_postgres_function(_function_name(node))
            if reason is not None:
                raise QueryError("guard_rejected", reason)
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
            name = node.this.name.lower()
            if name in PRIVILEGED_VIEWS:
                raise QueryError(
                    "guard_rejected", f"{name} reveals other sessions, settings or files"
                )


def _function_name(node: exp.Func) -> str:
    if isinstance(node, exp.Anonymous):
        this = node.this
        return (this.name if isinstance(this, exp.Identifier) else str(this)).lower()
    return node.sql_name().lower() if hasattr(node, "sql_name") else type(node).__name__.lower()
