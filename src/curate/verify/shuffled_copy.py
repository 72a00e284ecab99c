"""The gold smells that rerun a gold on a copy of the database whose rows are stored in
another order (rules ``float_order`` and ``shuffled_copy``, :mod:`curate.verify.smells`),
and every smell of a kept gold checked at once (:func:`check_smells`).

The copy is the embedded DuckDB file with every table of every schema rewritten in the
order of ``hash(rowid, SEED)``: fixed, so two curations of the same file check the same
copy, and unrelated to the order the rows were loaded in.  It is built in a temporary
folder when the first gold needs it and removed when curation ends.  On another engine
(PostgreSQL, Spark) the copy cannot be made here and the two rules do not run (the
report says which rules ran).
"""

from __future__ import annotations

import math
import shutil
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from curate.verify.gold import Drop
from curate.verify.smells import (
    Smell,
    SmellRules,
    duplicate_rows,
    numbers_as_text,
    sort_direction,
)
from score.comparison.compare import compare
from score.comparison.mismatch_cause import mismatch_cause
from score.execution.executor import Executor
from score.execution.result import QueryError, QueryResult

#: The order the copy stores rows in: ``hash(rowid, SEED)``.
SEED = 58
_FLOAT_AGGREGATES = (exp.Sum, exp.Avg, exp.Stddev, exp.StddevPop, exp.StddevSamp, exp.Variance)


def shuffle_database(source: Path, target: Path) -> None:
    """Copy the DuckDB file ``source`` to ``target`` with every table's rows stored in
    the order of ``hash(rowid, SEED)``."""
    import duckdb

    con = duckdb.connect(str(target))
    try:
        con.execute(f"ATTACH '{source.as_posix()}' AS src (READ_ONLY)")
        tables = con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'src' "
            "ORDER BY 1, 2"
        ).fetchall()
        for schema in sorted({s for s, _ in tables}):
            con.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        for schema, table in tables:
            con.execute(
                f'CREATE TABLE "{schema}"."{table}" AS SELECT * FROM src."{schema}"."{table}" '
                f"ORDER BY hash(rowid, {SEED})"
            )
        con.execute("DETACH src")
    finally:
        con.close()


class ShuffledCopy:
    """Executors on the shuffled copy of ``executor``'s database and on the database as
    it is, each on one thread, built on first use.  One thread makes an aggregate's
    floating-point value a function of the order rows are stored in alone: with several,
    DuckDB's partial sums meet in the order its threads finish, and a gold's last bits
    could differ between two runs on the same file (rule ``float_order`` compares the two
    single-threaded runs, so its verdict is the same at every curation)."""

    def __init__(self, executor: Executor) -> None:
        self._base = executor
        self._folder: Path | None = None
        self._opened: dict[str, Executor] = {}
        self._opening = threading.Lock()  # records are checked on two threads

    def _executor(self, which: str) -> Executor:
        with self._opening:
            if which not in self._opened:
                base = self._base
                path = Path(base.db_path)
                if which == "shuffled":
                    self._folder = Path(tempfile.mkdtemp(prefix="sqlgold-shuffled-"))
                    path = self._folder / "shuffled.duckdb"
                    shuffle_database(Path(base.db_path), path)
                settings = replace(base.settings, threads=1)
                self._opened[which] = Executor(
                    str(path), base.schema, settings, sql_dialect=base.sql_dialect
                )
            return self._opened[which]

    def try_execute(self, sql: str) -> QueryResult | QueryError:
        """``sql`` on the shuffled copy, on one thread."""
        return self._executor("shuffled").try_execute(sql)

    def try_execute_as_stored(self, sql: str) -> QueryResult | QueryError:
        """``sql`` on the database as it is stored, on one thread."""
        return self._executor("stored").try_execute(sql)

    def close(self) -> None:
        for opened in self._opened.values():
            opened.close()
        self._opened = {}
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def open_shuffled(executor: Executor, rules: SmellRules) -> ShuffledCopy | None:
    """The shuffled copy when a rule needs it and the engine allows it, else None."""
    if not rules.reruns or executor.engine != "duckdb":
        return None
    return ShuffledCopy(executor)


def _float_columns(result: QueryResult) -> list[int]:
    return [i for i, c in enumerate(result.table.columns) if pa.types.is_floating(c.type)]


def sums_floats(tree: exp.Expression | None, result: QueryResult) -> bool:
    """Whether the gold returns floats and aggregates in an order the plan picks."""
    if tree is None or not _float_columns(result):
        return False
    return tree.find(*_FLOAT_AGGREGATES) is not None


def _float_values_differ(a: QueryResult, b: QueryResult, ordered: bool) -> int | None:
    """The first float column (0-based) whose values differ exactly between ``a`` and
    ``b`` (row for row when ``ordered``, else each column sorted), or None."""
    for i in _float_columns(a):
        if i >= b.num_columns or not pa.types.is_floating(b.table.column(i).type):
            continue
        x, y = a.table.column(i), b.table.column(i)
        if not ordered:
            x, y = pc.sort_indices(x), pc.sort_indices(y)
            x, y = a.table.column(i).take(x), b.table.column(i).take(y)
        for u, v in zip(x.to_pylist(), y.to_pylist(), strict=False):
            if u != v and not (u is not None and v is not None and math.isnan(u) and math.isnan(v)):
                return i
    return None


def rerun_smell(
    sql: str,
    tree: exp.Expression | None,
    result: QueryResult,
    copy: ShuffledCopy,
    rules: SmellRules,
    *,
    profile: str,
    order_matters: bool,
) -> Smell | None:
    """Rules ``shuffled_copy`` and ``float_order``: the gold run on the shuffled copy."""
    floats = rules.float_order and sums_floats(tree, result)
    if not rules.shuffled_copy and not floats:
        return None
    other = copy.try_execute(sql)
    if isinstance(other, QueryError):
        if not rules.shuffled_copy:
            return None
        return Smell("shuffled_copy", f"on the shuffled copy the gold fails: {other.message}")
    verdict = compare(result, other, profile, order_matters=order_matters)
    if not verdict.match:
        cause = mismatch_cause(result, other, order_matters=order_matters)
        if floats and cause is not None and cause.name == "rounding":
            return Smell(
                "float_order",
                f"a float aggregate moves past the profile's tolerance with the rows' "
                f"storage order ({cause.detail})",
            )
        if rules.shuffled_copy:
            why = f" ({cause})" if cause is not None else ""
            return Smell(
                "shuffled_copy",
                f"on a copy of the database with its rows stored in another order the gold "
                f"returns another result{why}: {verdict.reason}",
            )
        return None
    if floats:
        stored = copy.try_execute_as_stored(sql)
        column = (
            _float_values_differ(stored, other, order_matters)
            if isinstance(stored, QueryResult)
            else None
        )
        if column is not None:
            return Smell(
                "float_order",
                f"column {column + 1} ({result.columns[column]!r}) changes in its last digits "
                "when the rows are stored in another order (a float aggregate); equal within "
                f"the {profile} profile's tolerance, not to a peer comparing exactly",
            )
    return None


def check_smells(
    question: str | None,
    sql: str,
    tree: exp.Expression | None,
    result: QueryResult,
    rules: SmellRules,
    copy: ShuffledCopy | None,
    *,
    profile: str,
    order_matters: bool,
) -> tuple[Drop | None, tuple[Smell, ...]]:
    """Every enabled smell of a gold that met the reference rules: the Drop of the first
    that drops (stage ``verify``, its rule), and the smells that warn."""
    found = [
        rules.duplicate_rows and duplicate_rows(question, result),
        rules.numbers_as_text and numbers_as_text(question, tree, result),
        rules.sort_direction and sort_direction(question, tree),
    ]
    if copy is not None:
        found.append(
            rerun_smell(
                sql, tree, result, copy, rules, profile=profile, order_matters=order_matters
            )
        )
    smells = tuple(s for s in found if isinstance(s, Smell))
    for smell in smells:
        if smell.drops:
            return Drop("verify", smell.rule, smell.reason), smells
    return None, smells
