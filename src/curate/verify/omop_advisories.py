"""OMOP advisories: conventions of the OMOP CDM a gold may break.  Advice for a curator,
never a verdict: an advisory is listed in the report and on the review page and never
drops a record (``curate --no-advisories`` turns the pass off).

A few rules, chosen because a gold that breaks one returns a wrong answer on any CDM,
while nothing in the shipped benchmark, Achilles, DataQualityDashboard or the OHDSI
QueryLibrary sets one off without cause (docs/curation.md counts them):

=========================  ================================================================
rule                       the gold ...
=========================  ================================================================
source_concept_hierarchy   walks ``concept_ancestor`` from a ``*_source_concept_id``: source
                           concepts have no place in the hierarchy, so no row is found
ancestor_reversed          filters ``concept_ancestor.descendant_concept_id`` by a concept
                           and takes the clinical concept from ``ancestor_concept_id``: the
                           concept's ancestors, where its descendants were meant
non_standard_concept       filters a standard concept column (``condition_concept_id`` ...)
                           by a concept id this database's vocabulary holds as not
                           standard: such a column holds only standard concepts (or 0); a
                           concept the vocabulary lacks is not judged
=========================  ================================================================

fastssv (154 rules) was evaluated for this pass and not adopted: on the shipped golds
every one of its 9 error-level findings was false for the question asked, and so were
those checked on Achilles and DataQualityDashboard (docs/curation.md).

>>> import sqlglot
>>> t = sqlglot.parse_one(
...     "SELECT count(*) FROM cdm.condition_occurrence co JOIN cdm.concept_ancestor ca "
...     "ON ca.descendant_concept_id = co.condition_source_concept_id "
...     "WHERE ca.ancestor_concept_id = 201826")
>>> [a.rule for a in static_advisories(t)]
['source_concept_hierarchy']
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, replace

from sqlglot import exp

from score.execution.result import QueryResult

RULES = ("source_concept_hierarchy", "ancestor_reversed", "non_standard_concept")

#: Columns of the clinical tables that hold standard concepts only (or 0).
_STANDARD_COLUMN = re.compile(
    r"^(condition|drug|procedure|measurement|observation|device|visit|visit_detail|specimen|"
    r"gender|race|ethnicity|death_type|note|episode)_concept_id$"
)


@dataclass(frozen=True)
class Advisory:
    rule: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"rule": self.rule, "reason": self.reason}


def _equalities(tree: exp.Expression):
    """Every ``column = other`` in the tree, both ways round."""
    for eq in tree.find_all(exp.EQ):
        left, right = eq.this, eq.expression
        yield left, right, eq
        yield right, left, eq


def _is_ancestor_table(column: exp.Column, tree: exp.Expression) -> bool:
    """Whether ``column``'s table (by alias or name) is ``concept_ancestor``."""
    qualifier = column.table.lower()
    for table in tree.find_all(exp.Table):
        if table.name.lower() == "concept_ancestor" and qualifier in (
            table.alias_or_name.lower(),
            "concept_ancestor",
        ):
            return True
    return False


def static_advisories(tree: exp.Expression | None) -> list[Advisory]:
    """The rules decided by the gold's text: ``source_concept_hierarchy`` and
    ``ancestor_reversed``."""
    if tree is None or not any(
        t.name.lower() == "concept_ancestor" for t in tree.find_all(exp.Table)
    ):
        return []
    found: dict[str, Advisory] = {}
    literal_descendant = False
    ancestor_to_clinical: str | None = None
    for one, other, eq in _equalities(tree):
        if not isinstance(one, exp.Column) or not _is_ancestor_table(one, tree):
            continue
        side = one.name.lower()
        if isinstance(other, exp.Column) and other.name.lower().endswith("_source_concept_id"):
            found.setdefault(
                "source_concept_hierarchy",
                Advisory(
                    "source_concept_hierarchy",
                    f"{eq.sql('duckdb')[:120]}: concept_ancestor holds standard concepts; "
                    f"a source concept ({other.name}) has no ancestors or descendants there",
                ),
            )
        if side == "descendant_concept_id" and isinstance(other, exp.Literal):
            literal_descendant = True
        if (
            side == "ancestor_concept_id"
            and isinstance(other, exp.Column)
            and _STANDARD_COLUMN.match(other.name.lower())
        ):
            ancestor_to_clinical = eq.sql("duckdb")[:120]
    if literal_descendant and ancestor_to_clinical:
        found["ancestor_reversed"] = Advisory(
            "ancestor_reversed",
            f"{ancestor_to_clinical} with descendant_concept_id fixed to a concept: this finds "
            "the concept's ancestors; its descendants come from ancestor_concept_id = concept "
            "and descendant_concept_id = the clinical column",
        )
    return list(found.values())


def concept_filters(tree: exp.Expression | None) -> dict[int, str]:
    """Concept ids a gold filters a standard concept column by (``=`` or ``IN``), each
    with the column; 0 (no matching concept) is left out."""
    if tree is None:
        return {}
    out: dict[int, str] = {}

    def take(column: exp.Expression, value: exp.Expression) -> None:
        if not isinstance(column, exp.Column) or not _STANDARD_COLUMN.match(column.name.lower()):
            return
        if isinstance(value, exp.Literal) and not value.is_string and value.this.isdigit():
            concept = int(value.this)
            if concept:
                out.setdefault(concept, column.name.lower())

    for one, other, _ in _equalities(tree):
        take(one, other)
    for found in tree.find_all(exp.In):
        for value in found.expressions:
            take(found.this, value)
    return out


class ConceptLookup:
    """Which concept ids the database holds as standard, asked once per id (the answers
    kept for the whole curation: most golds share their concepts)."""

    def __init__(self, executor) -> None:
        self._executor = executor
        self._standard: dict[int, bool | None] = {}
        self._lock = threading.Lock()  # records are checked on two threads

    def standard(self, concepts: list[int]) -> dict[int, bool | None]:
        """Each id: True standard, False in the vocabulary but not standard, None unknown
        (not in this database's vocabulary, which may hold only the concepts its data
        uses, or the lookup failed)."""
        with self._lock:
            missing = sorted(c for c in set(concepts) if c not in self._standard)
        if missing:
            schema = self._executor.schema or "cdm"
            ids = ", ".join(str(c) for c in missing)
            found = self._executor.try_execute(
                "SELECT concept_id, coalesce(standard_concept = 'S', false) AS standard "
                f'FROM "{schema}".concept WHERE concept_id IN ({ids})'
            )
            held = dict(found.rows()) if isinstance(found, QueryResult) else {}
            with self._lock:
                for c in missing:
                    self._standard[c] = None if held.get(c) is None else bool(held[c])
        with self._lock:
            return {c: self._standard[c] for c in concepts}


def non_standard(bad: list[tuple[int, str]]) -> Advisory:
    """Rule ``non_standard_concept`` for the (concept id, column) filters named."""
    shown = ", ".join(f"{column} = {concept}" for concept, column in bad[:5])
    return Advisory(
        "non_standard_concept",
        f"{shown}: not a standard concept in this database's vocabulary, where a conforming "
        "CDM holds only standard concepts in this column: the gold finds such rows only "
        "where the data breaks that convention (the standard concept is reached through "
        "concept_relationship 'Maps to')",
    )


def with_concept_advisories(outcomes: list, executor) -> list:
    """``outcomes`` (task, verdict) with rule ``non_standard_concept`` added to each kept
    verdict whose gold filters by a concept the database holds as not standard: every
    concept of every kept gold looked up by one query (none when no gold filters by one)."""
    wanted = sorted({c for _, v in outcomes if v.status == "kept" for c, _ in v.concepts})
    if not wanted:
        return outcomes
    standard = ConceptLookup(executor).standard(wanted)
    out = []
    for task, verdict in outcomes:
        bad = sorted((c, col) for c, col in verdict.concepts if standard.get(c) is False)
        if verdict.status == "kept" and bad:
            found = (*verdict.advisories, non_standard(bad).to_dict())
            verdict = replace(verdict, advisories=found)
        out.append((task, verdict))
    return out
