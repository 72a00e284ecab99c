"""Stages ohdsi and transpile of one record: its gold (and answer) read as DuckDB SQL.

:func:`read_gold` renders a record (:mod:`curate.ohdsi.render`) and transpiles its gold to
DuckDB (:mod:`curate.transpile.to_duckdb`), or says why not with a :class:`Drop`.  SQL of
dialect ``auto`` mixes dialects and is read with each reader it mixes, kept only when they
agree (:func:`agreed_reading`).  :mod:`curate.reading.templates` writes records of one
template's shape from the first reading of it.
"""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from curate.ohdsi.errors import RenderError
from curate.ohdsi.render import render_record_gold_tree
from curate.reading.tree_memory import collected_at_end
from curate.sources import AUTO_DIALECT, READ_DIALECT
from curate.sources.dialect import candidates
from curate.sources.records import SourceRecord
from curate.transpile.to_duckdb import READS, Transpiled, TranspileError, transpile
from curate.verify.gold import Drop


def to_duckdb(
    sql: str, dialect: str | None, field_name: str, tree: exp.Expr | None = None
) -> Transpiled | Drop:
    """``sql`` (or its ``tree``, already read) transpiled to DuckDB, or the drop saying why not."""
    if dialect == AUTO_DIALECT:
        return agreed_reading(sql, field_name)
    read = READ_DIALECT.get(dialect or "")
    if read is None:
        return Drop("transpile", "dialect", f"{field_name}: unknown dialect {dialect!r}")
    try:
        return transpile(sql, read=read, tree=tree)
    except TranspileError as e:
        rule = getattr(e, "rule", None) or "transpile"
        return Drop("transpile", rule, f"{field_name}: {e.message}")


def agreed_reading(sql: str, field_name: str) -> Transpiled | Drop:
    """SQL mixing dialects, read with the reader of each dialect it mixes.

    Kept when every reading that succeeds gives the same DuckDB query (the constructs mean
    the same in each); rule ``ambiguous_dialect`` when two readings differ, and
    ``unreadable_dialect`` when no reader carries it over.
    """
    readings: dict[str, Transpiled] = {}
    errors: list[str] = []
    for dialect in candidates(sql):
        try:
            readings[dialect] = transpile(sql, read=dialect)
        except TranspileError as e:
            errors.append(f"{dialect}: {e.message}")
    if not readings:
        return Drop(
            "transpile",
            "unreadable_dialect",
            f"{field_name}: mixes dialects and no reader carries it over ({'; '.join(errors)})",
        )
    texts = {reading.sql for reading in readings.values()}
    if len(texts) > 1:
        names = ", ".join(readings)
        return Drop(
            "transpile",
            "ambiguous_dialect",
            f"{field_name}: mixes dialects and its {names} readings differ in meaning "
            "(give its gold_dialect)",
        )
    dialect, reading = next(iter(readings.items()))
    return replace(reading, rules=(f"read_as_{dialect}", *reading.rules))


def read_gold(
    record: SourceRecord,
) -> tuple[tuple[str, ...], SourceRecord | None, Transpiled | Drop]:
    """Stages ohdsi and transpile of a record's gold: render notes, the rendered record and
    the gold as DuckDB SQL, or the drop saying why not (:mod:`curate.reading.templates` writes
    records of a template's shape from its first reading).  An unexpected exception leaves
    with the stage it happened in (``error.sqlgold_stage``).  Its sqlglot trees are freed by
    one garbage collection at the end (:mod:`curate.reading.tree_memory`)."""
    with collected_at_end():
        return _read_gold(record)


def _read_gold(
    record: SourceRecord,
) -> tuple[tuple[str, ...], SourceRecord | None, Transpiled | Drop]:
    try:
        # a gold made one query comes as its tree, read as the transpile reads SQL Server
        rendered, notes, tree = render_record_gold_tree(record, READS["tsql"])
    except RenderError as e:
        return (), None, Drop("ohdsi", e.reason, e.message)
    except Exception as error:
        error.sqlgold_stage = "ohdsi"
        raise
    try:
        return (
            notes,
            rendered,
            to_duckdb(rendered.gold_sql, rendered.gold_dialect, "gold_sql", tree),
        )
    except Exception as error:
        error.sqlgold_stage = "transpile"
        raise
