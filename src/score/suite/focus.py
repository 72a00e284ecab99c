"""A candidate's focus: the values one gold compares its columns with.

A candidate variant is aimed at one gold: its palettes (:class:`score.suite.palette.Palette`)
lead with that gold's constants and their neighbours, the concepts it names or selects
with their families and the suite's local concepts for it
(:mod:`score.suite.local_concepts`), the base's concepts of a domain it names, and,
under :data:`READS`, the CDM tables it reads.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import Any

import duckdb
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.cdm.schema import CDM_COLUMN_TYPES, CDM_TABLES
from score.suite.value_pool import OWN, Pools, gold_constants, related_concepts

#: a column's concepts of a domain a gold names, taken from the base when a gold reads it
NAMED_DOMAIN_VALUES = 4
#: the focus key that lists the CDM tables a gold reads
READS = ("*", "reads")


def focus_of(
    con: duckdb.DuckDBPyConnection,
    gold_sql: str,
    today: dt.date,
    base: Pools,
    domains: Mapping[tuple[str, str], str],
    known: set[int],
    local: Mapping[str, Sequence[int]] | None = None,
) -> Pools:
    """The values one gold compares its columns with (and, for its concepts, their
    family), for the palettes of a candidate aimed at that gold.  A concept id the gold
    names where it compares a column goes into that column even when the base
    vocabulary lacks it: a gold written for another database (TEXT-TO-OMOP's) names
    concepts of a fuller vocabulary, and its rows must exist for it to return any.
    ``local`` holds the gold's local concepts by domain (:mod:`score.suite.local_concepts`):
    they join every concept-id column of their domain."""
    gold, concepts, filters = gold_constants([gold_sql], today=today)
    read = _tables_read(gold_sql)
    related = related_concepts(con, concepts, filters) if concepts or filters else {}
    focus: Pools = {}
    for key, values in gold.items():
        if key[1].endswith("concept_id"):
            values = [v for v in values if v in known or v in concepts]
        if values:
            focus[key] = list(dict.fromkeys(values))
    for key, domain in domains.items():
        if domain in related and key not in focus:
            focus[key] = list(related[domain])
    for key, domain in domains.items():
        if local and domain in local:
            focus[key] = list(dict.fromkeys([*focus.get(key, []), *local[domain]]))
            if len(own := [v for v in focus[key] if v in concepts]) > 1:
                focus[(OWN + key[0], key[1])] = own  # those the gold names, for a palette
    for key, ids in _of_named_domains(con, read, gold.get(("concept", "domain_id"))).items():
        focus.setdefault(key, ids)
    for key in _joined_to_concepts(gold_sql):
        if key not in focus and not any(v is not None for v in base.get(key) or ()):
            # a column the base leaves empty that the gold joins to the concept table
            # (device_exposure.unit_concept_id = c.concept_id): the concepts the same
            # column holds in another table, else concept 0, or the join finds no row
            twins = [v for k in sorted(base) if k[1] == key[1] for v in base[k] if v in known]
            found = list(dict.fromkeys(twins))[:NAMED_DOMAIN_VALUES] or ([0] if 0 in known else [])
            if found:
                focus[key] = found
    unknown = sorted(concepts - known)
    if unknown:  # its own domain is unknown: the main concept column of each table read
        for table in read:
            column = f"{table.split('_')[0]}_concept_id"
            if column in CDM_COLUMN_TYPES[table] and table not in ("concept", "concept_ancestor"):
                focus[(table, column)] = list(
                    dict.fromkeys([*focus.get((table, column), []), *unknown])
                )
    focus[READS] = read
    return focus


def _of_named_domains(
    con: duckdb.DuckDBPyConnection, read: Sequence[str], domains: Sequence[Any] | None
) -> Pools:
    """(table, concept column) -> the base's most frequent concepts of that column in a
    domain the gold names (``c.domain_id = 'Measurement'``), for each table it reads
    (``read``)."""
    named = sorted({d for d in domains or () if isinstance(d, str)})
    if not named:
        return {}
    out: Pools = {}
    for table in [t for t in read if t not in ("concept", "concept_ancestor")]:
        for column in [c for c in CDM_COLUMN_TYPES[table] if c.endswith("_concept_id")]:
            rows = con.execute(
                f'SELECT t."{column}" FROM "{table}" t JOIN concept c '
                f'ON c.concept_id = t."{column}" WHERE c.domain_id IN '
                "(SELECT UNNEST(?::VARCHAR[])) GROUP BY 1 ORDER BY count(*) DESC, 1 "
                f"LIMIT {NAMED_DOMAIN_VALUES}",
                [named],
            ).fetchall()
            if rows:
                out[(table, column)] = [r[0] for r in rows]
    return out


def _joined_to_concepts(sql: str) -> list[tuple[str, str]]:
    """The (table, column) pairs of the CDM's clinical tables that ``sql`` joins to the
    concept table's ``concept_id`` by equality.

    >>> _joined_to_concepts("SELECT c.concept_name FROM cdm.device_exposure de "
    ...     "JOIN cdm.concept c ON de.unit_concept_id = c.concept_id")
    [('device_exposure', 'unit_concept_id')]
    """
    try:
        tree = parse_one(sql, read="duckdb")
    except SqlglotError:
        return []
    tables = {t.alias_or_name: t.name for t in tree.find_all(exp.Table) if t.name in CDM_TABLES}
    found = []
    for eq in tree.find_all(exp.EQ):
        for side, other in ((eq.this, eq.expression), (eq.expression, eq.this)):
            if not (isinstance(side, exp.Column) and isinstance(other, exp.Column)):
                continue
            owner = tables.get(side.table)
            if (
                tables.get(other.table) == "concept"
                and other.name == "concept_id"
                and owner not in (None, "concept", "concept_ancestor")
                and side.name.endswith("concept_id")
            ):
                found.append((owner, side.name))
    return sorted(set(found))


def _tables_read(sql: str) -> list[str]:
    try:
        tree = parse_one(sql, read="duckdb")
    except SqlglotError:
        return []
    return sorted({t.name for t in tree.find_all(exp.Table) if t.name in CDM_TABLES})
