"""Local concepts named for a gold's ``LIKE`` on ``concept_name`` where no concept of the
base vocabulary matches it (a gold written for a fuller vocabulary asks for
``c.concept_name ILIKE '%intensive care%'``), and the domain each clinical table's main
concept column holds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import duckdb
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.suite.local_concepts import LocalConcept

#: the domain of the concepts a clinical table's main concept column holds (the CDM's rule)
MAIN_CONCEPT_DOMAINS = {
    ("visit_occurrence", "visit_concept_id"): "Visit",
    ("visit_detail", "visit_detail_concept_id"): "Visit",
    ("condition_occurrence", "condition_concept_id"): "Condition",
    ("drug_exposure", "drug_concept_id"): "Drug",
    ("procedure_occurrence", "procedure_concept_id"): "Procedure",
    ("measurement", "measurement_concept_id"): "Measurement",
    ("observation", "observation_concept_id"): "Observation",
    ("device_exposure", "device_concept_id"): "Device",
    ("specimen", "specimen_concept_id"): "Specimen",
}


def unmatched_names(con: duckdb.DuckDBPyConnection, gold_sql: str) -> list[LocalConcept]:
    """Local concepts named so a gold's LIKE patterns on ``concept_name`` match them, where
    no concept of the base vocabulary matches (``c.concept_name ILIKE '%intensive care%'``
    joined to ``visit_detail_concept_id``, on a vocabulary with no such concept): each a
    child of the first standard concept of the domain of the column the gold joins the
    concept to, named from the patterns (their wildcards dropped)."""
    try:
        tree = parse_one(gold_sql, read="duckdb")
    except SqlglotError:
        return []
    aliases = {t.alias_or_name: t for t in tree.find_all(exp.Table) if t.name == "concept"}
    tables = {t.alias_or_name: t.name for t in tree.find_all(exp.Table)}
    out = []
    for alias in sorted(aliases):
        patterns = [
            (node.expression.name, isinstance(node, exp.ILike))
            for node in tree.find_all(exp.Like, exp.ILike)
            if isinstance(node.this, exp.Column)
            and node.this.name == "concept_name"
            and node.this.table in (alias, "")
            and isinstance(node.expression, exp.Literal)
        ]
        if not patterns or _any_named(con, patterns):
            continue
        domain = _joined_domain(tree, alias, tables)
        template = con.execute(
            "SELECT min(concept_id) FROM concept WHERE domain_id = ? AND standard_concept = 'S'",
            [domain],
        ).fetchone()
        if domain is None or template is None or template[0] is None:
            continue
        name = " ".join(p.replace("%", " ").replace("_", "a").strip() for p, _ in patterns)
        out.append(LocalConcept(template[0], "concept_name", " ".join(name.split())))
    return sorted(set(out))


def _any_named(con: duckdb.DuckDBPyConnection, patterns: Sequence[tuple[str, bool]]) -> bool:
    where = " AND ".join(f"concept_name {'ILIKE' if i else 'LIKE'} ?" for _, i in patterns)
    return bool(
        con.execute(
            f"SELECT 1 FROM concept WHERE {where} LIMIT 1", [p for p, _ in patterns]
        ).fetchall()
    )


def _joined_domain(tree: exp.Expr, alias: str, tables: Mapping[str, str]) -> str | None:
    """The domain of the clinical concept column ``alias.concept_id`` is joined to."""
    for eq in tree.find_all(exp.EQ):
        sides = [eq.this, eq.expression]
        if not all(isinstance(x, exp.Column) for x in sides):
            continue
        for mine, other in (sides, sides[::-1]):
            if mine.name == "concept_id" and mine.table == alias:
                domain = MAIN_CONCEPT_DOMAINS.get((tables.get(other.table, ""), other.name))
                if domain:
                    return domain
    return None
