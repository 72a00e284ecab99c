"""What suite build reads from the base database (a DuckDB file, read-only): the
clinical tables it fills, every column's pool of values and each gold's focus
(:mod:`score.suite.value_pool`), the tables' Arrow schemas, and the vocabulary every
variant shares."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from score.cdm.duckdb_file import use_cdm_schema
from score.cdm.schema import bigint_id_type
from score.suite import local_concepts, named_concepts, value_pool
from score.suite.focus import focus_of
from score.suite.query_runs import today_of
from score.suite.suite_file import VOCABULARY_TABLES


def _with_self_ancestry(table: pa.Table, concepts: Sequence[int]) -> pa.Table:
    """``concept_ancestor`` with a row (c, c, 0, 0) for each concept a gold names that
    the base vocabulary lacks: every standard concept is its own ancestor in an OMOP
    vocabulary, and a gold written for a fuller one (``descendant_concept_id`` of
    ``ancestor_concept_id = c``) finds its rows only so."""
    if not concepts:
        return table
    rows = [
        {
            "ancestor_concept_id": c,
            "descendant_concept_id": c,
            "min_levels_of_separation": 0,
            "max_levels_of_separation": 0,
        }
        for c in concepts
    ]
    return pa.concat_tables([table, pa.Table.from_pylist(rows, schema=table.schema)])


def with_bigint_ids(schema: pa.Schema) -> pa.Schema:
    """``schema`` with its 32-bit ``*_id`` columns made 64-bit.  The CDM's keys are INTEGER
    in the embedded database and BIGINT in many a real one (TEXT-TO-OMOP's golds name
    persons such as 296377155196858): a variant holds the ids a gold names, whichever CDM
    it was written for.

    >>> with_bigint_ids(pa.schema([("person_id", pa.int32()), ("quantity", pa.int32())]))
    person_id: int64
    quantity: int32
    """
    return pa.schema(
        [
            f.with_type(pa.int64())
            if f.type == pa.int32() and bigint_id_type(f.name, "INTEGER") == "BIGINT"
            else f
            for f in schema
        ]
    )


def _reversed(table: pa.Table) -> pa.Table:
    """``table``'s rows last to first.  The variants hold the vocabulary so: a query
    that leaves a tie to the order rows are stored in (``ORDER BY level`` where its gold
    orders by level, then id) finds them in the base database's order there and in the
    opposite order on every variant, each pair of tied rows the other way round."""
    return table.take(pa.array(range(table.num_rows - 1, -1, -1), type=pa.int64()))


def read_base(
    base_db: Path, schema: str | None, answerable: Sequence[Mapping[str, Any]], today: dt.date
) -> tuple:
    """(clinical tables filled on the base, pools, Arrow schemas, vocabulary tables,
    task id -> focus) of the base database at ``base_db``."""
    con = duckdb.connect(str(base_db), read_only=True)
    try:
        use_cdm_schema(con, schema)
        tables = [
            t
            for (t,) in con.execute(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_catalog = current_database() AND table_schema = current_schema() "
                "ORDER BY 1"
            ).fetchall()
        ]
        filled = [
            t
            for t in tables
            if t not in VOCABULARY_TABLES
            and t in value_pool.CDM_TABLES
            and con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] > 0
        ]
        # visit details: a base database may hold none, a gold may ask for an ICU stay
        unfilled = [
            t
            for t in ("visit_detail",)
            if t in tables
            and t not in filled
            and any(t in task["gold_sql"].lower() for task in answerable)
        ]
        filled = sorted([*filled, *unfilled])
        base = value_pool.base_pools(con, filled)
        gold, concepts, filters = value_pool.gold_constants(
            [t["gold_sql"] for t in answerable],
            today=today,
            todays=[today_of(t) for t in answerable],
        )
        related = value_pool.related_concepts(con, concepts, filters)
        known = {r[0] for r in con.execute("SELECT concept_id FROM concept").fetchall()}
        domains = {
            **{k: d for k, d in named_concepts.MAIN_CONCEPT_DOMAINS.items() if k[0] in unfilled},
            **value_pool.concept_domains(con, base),
        }
        pools = value_pool.merged_pools(base, gold, domains, related, known)
        wanted = {}
        for t in answerable:
            _, named, concept_filters = value_pool.gold_constants(
                [t["gold_sql"]], today=today_of(t) or today
            )
            wanted[t["id"]] = sorted(
                {
                    *local_concepts.local_concepts_of(con, concept_filters, named),
                    *named_concepts.unmatched_names(con, t["gold_sql"]),
                }
            )
        ids = local_concepts.local_ids(c for found in wanted.values() for c in found)
        local_rows = local_concepts.local_rows(con, ids)
        template_domains = dict(
            con.execute(
                "SELECT concept_id, domain_id FROM concept WHERE concept_id IN "
                "(SELECT UNNEST(?::BIGINT[]))",
                [sorted({c.template for c in ids})],
            ).fetchall()
        )
        known |= set(ids.values())
        focus = {
            t["id"]: focus_of(
                con,
                t["gold_sql"],
                today_of(t) or today,
                base,
                domains,
                known,
                local_concepts.by_domain(wanted[t["id"]], ids, template_domains),
            )
            for t in answerable
        }
        schemas = {
            t: with_bigint_ids(con.sql(f'SELECT * FROM "{t}" LIMIT 0').to_arrow_table().schema)
            for t in filled
        }
        vocabulary = {
            t: con.sql(f'SELECT * FROM "{t}"').to_arrow_table()
            for t in VOCABULARY_TABLES
            if t in tables
        }
        if "concept_ancestor" in vocabulary:
            vocabulary["concept_ancestor"] = _with_self_ancestry(
                vocabulary["concept_ancestor"], sorted(concepts - known)
            )
        for table, rows in sorted(local_rows.items()):
            if table in vocabulary and rows:
                found = vocabulary[table]
                vocabulary[table] = pa.concat_tables(
                    [found, pa.Table.from_pylist(rows, schema=found.schema)]
                )
        vocabulary = {t: _reversed(rows) for t, rows in vocabulary.items()}
    finally:
        con.close()
    return filled, pools, schemas, vocabulary, focus
