"""Vocabulary variants: a suite's databases whose vocabulary is not the shared one.

Every candidate of :mod:`score.suite.variant_data` changes only the clinical rows; the
vocabulary tables are the base database's with the suite's local concepts
(:mod:`score.suite.local_concepts`), the same in every variant.  A near miss whose
difference lives in the vocabulary (it returns ``domain_id`` where its gold returns
``concept_class_id``, and the concept it reads has the same value in both; it breaks a
tie between concept classes the other way, and no two classes tie) returns its gold's
result on each of them.  A vocabulary variant holds the vocabulary tables of its own,
changed from the shared ones in one of three ways (:data:`KINDS`), as a later vocabulary
release or another site's may differ:

``reclassified``  concepts a gold names (by id, code, vocabulary, class or domain) and
                  a few others get another class or domain (one the vocabulary already
                  holds, so every foreign key still finds its row), another standard flag
                  or validity, and a synonym of their own; then the other concepts are
                  gathered into the :data:`GATHERING` classes that hold the most, but
                  the first concept of about half the other classes, which stays: a list
                  of the classes with the most concepts reaches classes of one concept,
                  among which the classes left with none sort (a join that keeps a class
                  without concepts counts it once);
``thinned``       of each vocabulary, the concepts of about half its classes only, one to
                  three of each class: counts tie, and a class with no concept is listed in
                  ``concept_class`` (the concepts a vocabulary, domain or class row, a
                  gold or a clinical row names stay; the rows of the other vocabulary
                  tables whose concepts went go with them);
``levels``        ``concept_ancestor`` rows with other levels of separation: a concept's
                  row of itself with a level above 0, other rows one level further apart.

Its clinical tables are those of the first variant the build kept, so it differs from
that variant in its vocabulary alone: the build (:mod:`score.suite.build`) keeps it only
if every gold runs on it, it tells a near miss apart, and every reference answer still
returns its gold's result there.

>>> import pyarrow as pa
>>> concept = pa.table({"concept_id": [1, 2], "concept_code": ["a", "b"]})
>>> sorted(named_concepts({"concept": concept}, ["SELECT 'z' WHERE concept_id = 2"]))
[2]
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from sqlglot import exp, parse_one
from sqlglot.errors import SqlglotError

from score.files import file_sha256
from score.suite.suite_file import DATA, VOCABULARY, VOCABULARY_TABLES

#: the ways a vocabulary variant differs from the shared vocabulary, tried in turn
KINDS = ("reclassified", "thinned", "levels")
#: the classes a reclassified vocabulary gathers the concepts of the others into
GATHERING = 3
#: a concept's language for the synonyms the suite adds: English
ENGLISH = 4180186
#: the share of the other concepts (beside those a gold names) reclassified
RECLASSIFIED_SHARE = 0.05
#: the shared vocabulary's rows that name a concept (kept when concepts are thinned)
_NAMING = {
    "domain": "domain_concept_id",
    "vocabulary": "vocabulary_concept_id",
    "concept_class": "concept_class_concept_id",
}
#: the concept columns of each table a thinned vocabulary filters
_CONCEPT_COLUMNS = {
    "concept_ancestor": ("ancestor_concept_id", "descendant_concept_id"),
    "concept_relationship": ("concept_id_1", "concept_id_2"),
    "concept_synonym": ("concept_id",),
    "drug_strength": ("drug_concept_id", "ingredient_concept_id"),
}


def reads_vocabulary(sql: str) -> bool:
    """Whether a query (DuckDB SQL) names a vocabulary table.

    >>> reads_vocabulary("SELECT 1 FROM cdm.concept_class"), reads_vocabulary("SELECT 1")
    (True, False)
    """
    try:
        tables = parse_one(sql, read="duckdb").find_all(exp.Table)
        return any(t.name.lower() in VOCABULARY_TABLES for t in tables)
    except SqlglotError:
        return False


def same_clinical_rows(suite_folder: Path, a: str, b: str) -> bool:
    """Whether variants ``a`` and ``b`` hold the same clinical tables, byte for byte (a
    vocabulary variant holds the first variant's)."""

    def clinical(name: str) -> dict[str, str]:
        return {
            p.name: file_sha256(p)
            for p in sorted((suite_folder / DATA / name).glob("*.parquet"))
            if p.stem not in VOCABULARY_TABLES
        }

    return clinical(a) == clinical(b)


def vocabulary_changes(suite_folder: Path, name: str) -> frozenset[str]:
    """The vocabulary tables variant ``name`` holds other rows of than the shared ones."""
    own = suite_folder / DATA / name
    shared = suite_folder / DATA / VOCABULARY
    return frozenset(
        t
        for t in VOCABULARY_TABLES
        if (own / f"{t}.parquet").is_file()
        and (
            not (shared / f"{t}.parquet").is_file()
            or file_sha256(own / f"{t}.parquet") != file_sha256(shared / f"{t}.parquet")
        )
    )


def _literals(sqls: Iterable[str]) -> tuple[set[int], set[str]]:
    numbers: set[int] = set()
    texts: set[str] = set()
    for sql in sqls:
        try:
            tree = parse_one(sql, read="duckdb")
        except SqlglotError:
            continue
        for lit in tree.find_all(exp.Literal):
            if lit.is_string:
                texts.add(lit.this)
            elif lit.is_int:
                numbers.add(int(lit.this))
    return numbers, texts


def named_concepts(vocabulary: Mapping[str, pa.Table], golds: Sequence[str]) -> set[int]:
    """The concepts ``golds`` name: by id, or by the code they carry."""
    numbers, texts = _literals(golds)
    concept = vocabulary["concept"]
    ids = concept.column("concept_id").to_pylist()
    codes = concept.column("concept_code").to_pylist()
    return {i for i, c in zip(ids, codes, strict=True) if i in numbers or c in texts}


def concepts_used(tables: Mapping[str, pa.Table]) -> set[int]:
    """The concepts clinical ``tables`` name (in their ``*_concept_id`` columns).

    >>> sorted(concepts_used({"person": pa.table({"gender_concept_id": [8507, None, 8507]})}))
    [8507]
    """
    used: set[int] = set()
    for table in tables.values():
        for name in table.column_names:
            if name.endswith("_concept_id"):
                used |= {v for v in table.column(name).to_pylist() if v is not None}
    return used


def vocabulary_variant(
    vocabulary: Mapping[str, pa.Table],
    golds: Sequence[str],
    kind: str,
    seed: str,
    *,
    used: set[int] | frozenset[int] = frozenset(),
) -> dict[str, pa.Table]:
    """The vocabulary tables of a variant of ``kind`` (one of :data:`KINDS`), aimed at
    ``golds`` and drawn with ``seed``: every table of ``vocabulary``, changed or not.
    ``used``: the concepts its clinical rows name, which a thinned vocabulary keeps (every
    foreign key to ``concept`` finds its row)."""
    if kind not in KINDS:
        raise ValueError(f"no vocabulary variant of kind {kind!r}")
    rng = random.Random(seed)
    named = named_concepts(vocabulary, golds)
    _, texts = _literals(golds)
    tables = dict(vocabulary)
    if kind == "reclassified":
        tables.update(_reclassified(vocabulary, named, texts, rng))
        tables["concept"] = _gathered(tables["concept"], named, rng)
    elif kind == "thinned":
        tables.update(_thinned(vocabulary, named | set(used), rng))
    else:
        tables["concept_ancestor"] = _levels(vocabulary["concept_ancestor"], rng)
    return tables


def _rows(table: pa.Table) -> list[dict[str, Any]]:
    return table.to_pylist()


def _table(rows: list[dict[str, Any]], like: pa.Table) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=like.schema)


def _reclassified(
    vocabulary: Mapping[str, pa.Table], named: set[int], texts: set[str], rng: random.Random
) -> dict[str, pa.Table]:
    concept = vocabulary["concept"]
    rows = _rows(concept)
    values = {
        c: sorted({r[c] for r in rows if r[c] is not None})
        for c in ("concept_class_id", "domain_id")
    }
    chosen = [
        r
        for r in rows
        if r["concept_id"] in named
        or any(r[c] in texts for c in ("vocabulary_id", "concept_class_id", "domain_id"))
        and rng.random() < 0.5
        or rng.random() < RECLASSIFIED_SHARE
    ]
    synonyms = _rows(vocabulary["concept_synonym"]) if "concept_synonym" in vocabulary else None
    for r in chosen:
        # what it is (its class or its domain, never to the other's value: a gold may
        # return both) and whether it is standard or valid
        column = rng.choice(("concept_class_id", "domain_id"))
        taken = {r["concept_class_id"], r["domain_id"]}
        others = [v for v in values[column] if v not in taken]
        if others:
            r[column] = rng.choice(others)
        if rng.random() < 0.5:
            r["standard_concept"] = rng.choice(
                [v for v in ("S", "C", None) if v != r["standard_concept"]]
            )
        else:  # invalid_reason: no longer valid, or valid again
            if r["invalid_reason"] is None:
                r["invalid_reason"] = rng.choice(("D", "U"))
                if isinstance(r.get("valid_end_date"), dt.date):
                    start = r.get("valid_start_date") or r["valid_end_date"]
                    r["valid_end_date"] = max(start, min(r["valid_end_date"], dt.date(2020, 1, 1)))
            else:
                r["invalid_reason"] = None
                r["valid_end_date"] = dt.date(2099, 12, 31)
        if synonyms is not None and r["concept_name"]:
            synonyms.append(
                {
                    "concept_id": r["concept_id"],
                    "concept_synonym_name": r["concept_name"].lower() + " (synonym)",
                    "language_concept_id": ENGLISH,
                }
            )
    out = {"concept": _table(rows, concept)}
    if synonyms is not None:
        out["concept_synonym"] = _table(synonyms, vocabulary["concept_synonym"])
    return out


def _thinned(
    vocabulary: Mapping[str, pa.Table], named: set[int], rng: random.Random
) -> dict[str, pa.Table]:
    concept = vocabulary["concept"]
    rows = _rows(concept)
    keep = set(named)
    for table, column in _NAMING.items():
        if table in vocabulary:
            keep |= {v for v in vocabulary[table].column(column).to_pylist() if v is not None}
    by_class: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for r in rows:
        by_class.setdefault((r["vocabulary_id"], r["concept_class_id"]), []).append(r)
    kept_ids: set[int] = set()
    for key in sorted(by_class, key=lambda k: (str(k[0]), str(k[1]))):
        members = by_class[key]
        if rng.random() < 0.5:
            continue
        count = rng.randint(1, 3)
        kept_ids |= {r["concept_id"] for r in members[:count]}
    kept_ids |= {r["concept_id"] for r in rows if r["concept_id"] in keep}
    out = {"concept": _table([r for r in rows if r["concept_id"] in kept_ids], concept)}
    for table, columns in _CONCEPT_COLUMNS.items():
        if table in vocabulary:
            out[table] = _table(
                [
                    r
                    for r in _rows(vocabulary[table])
                    if all(r[c] is None or r[c] in kept_ids for c in columns)
                ],
                vocabulary[table],
            )
    return out


def _levels(ancestor: pa.Table, rng: random.Random) -> pa.Table:
    rows = _rows(ancestor)
    for r in rows:
        if rng.random() >= 0.2:
            continue
        if r["ancestor_concept_id"] == r["descendant_concept_id"]:
            r["min_levels_of_separation"], r["max_levels_of_separation"] = rng.choice(
                ((0, 1), (1, 1))
            )
        else:
            r["max_levels_of_separation"] = (r["max_levels_of_separation"] or 0) + 1
    return _table(rows, ancestor)


def _gathered(concept: pa.Table, named: set[int], rng: random.Random) -> pa.Table:
    """Every concept in one of the :data:`GATHERING` largest classes, but for the first
    concept (by id) of about half the other classes, which stays in its class, and the
    concepts a gold names (``named``), whose class was chosen for them."""
    rows = _rows(concept)
    sizes: dict[Any, int] = {}
    first: dict[Any, int] = {}  # each class's first concept, by id
    for r in rows:
        c = r["concept_class_id"]
        sizes[c] = sizes.get(c, 0) + 1
        first[c] = min(first.get(c, r["concept_id"]), r["concept_id"])
    ranked = sorted(sizes, key=lambda c: (-sizes[c], str(c)))
    gathering = ranked[:GATHERING]
    staying = {first[c] for c in sorted(ranked[GATHERING:], key=str) if rng.random() < 0.5}
    staying |= named
    for r in rows:
        if r["concept_class_id"] not in gathering and r["concept_id"] not in staying:
            r["concept_class_id"] = rng.choice(gathering)
    return _table(rows, concept)
