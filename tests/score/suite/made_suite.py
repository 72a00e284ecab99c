"""A small real test suite made from the test database, through the suite file's public
API only (what ``sqlgold suite build`` writes has the same form).

Three variants, each a subset or a perturbation of the base database's clinical tables
(the vocabulary tables copied whole):

* ``v1-even``: the persons with an even ``person_id`` and their rows;
* ``v2-thirds``: the persons with ``person_id % 3 = 1`` and their rows;
* ``v3-genders``: every person and row, but every tenth person's ``gender_concept_id``
  is 0 (no matching concept) and every condition starts a day later.

So a query that only coincides with its gold on the base database is told apart: a
constant (``SELECT 1130``) by ``v1-even``, a dropped gender filter by ``v3-genders``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from score.execution.executor import Executor
from score.suite.suite_file import (
    DATA,
    MANIFEST,
    VOCABULARY,
    VOCABULARY_TABLES,
    Suite,
    Variant,
    data_sha256,
    manifest_text,
    variant_database,
    variant_files,
    write_tables,
)

#: Clinical tables and the column that ties each row to a person.
PERSON_TABLES = (
    "person",
    "observation_period",
    "visit_occurrence",
    "condition_occurrence",
    "drug_exposure",
    "measurement",
    "observation",
    "procedure_occurrence",
    "death",
)

#: variant name -> (the persons kept, replacements of columns: table -> {column: SQL}).
VARIANTS: dict[str, tuple[str, dict[str, dict[str, str]]]] = {
    "v1-even": ("person_id % 2 = 0", {}),
    "v2-thirds": ("person_id % 3 = 1", {}),
    "v3-genders": (
        "true",
        {
            "person": {
                "gender_concept_id": "CASE WHEN person_id % 10 = 0 THEN 0 "
                "ELSE gender_concept_id END"
            },
            "condition_occurrence": {
                "condition_start_date": "condition_start_date + INTERVAL 1 DAY",
                "condition_start_datetime": "condition_start_datetime + INTERVAL 1 DAY",
            },
        },
    ),
}


def _select(con: duckdb.DuckDBPyConnection, table: str, where: str, changes: Mapping) -> str:
    columns = [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'cdm' AND table_name = ? ORDER BY ordinal_position",
            [table],
        ).fetchall()
    ]
    picked = ", ".join(
        f'CAST({changes[c]} AS {_type(con, table, c)}) AS "{c}"' if c in changes else f'"{c}"'
        for c in columns
    )
    return f'SELECT {picked} FROM cdm."{table}" WHERE {where} ORDER BY ALL'


def _type(con: duckdb.DuckDBPyConnection, table: str, column: str) -> str:
    (row,) = con.execute(
        "SELECT data_type FROM information_schema.columns "
        "WHERE table_schema = 'cdm' AND table_name = ? AND column_name = ?",
        [table, column],
    ).fetchall()
    return str(row[0])


def make_suite(
    base: Path,
    folder: Path,
    *,
    task_set_sha256: str,
    cache: Path,
    drops: Mapping[str, str] | None = None,
    variants: Mapping[str, tuple[str, dict[str, dict[str, str]]]] = VARIANTS,
    local_concepts: Sequence[Mapping[str, Any]] = (),
    differ_on: Mapping[str, Sequence[str]] | None = None,
    vocabularies: Mapping[str, Mapping[str, pa.Table]] | None = None,
) -> Suite:
    """Write a suite for the task set hashed ``task_set_sha256`` into ``folder`` from
    the base database ``base``; its variants' DuckDB databases go to ``cache``.
    ``local_concepts``: rows added to the shared ``concept`` table, as a build adds its
    local concepts (:mod:`score.suite.local_concepts`); ``differ_on``: the variants on
    which each task of ``drops`` differs (none: a suite built before they were named);
    ``vocabularies``: a vocabulary variant's own vocabulary tables, by variant name."""
    from score.suite.suite_file import read_suite

    con = duckdb.connect(str(base), read_only=True)
    try:
        vocabulary = {
            t: con.sql(f'SELECT * FROM cdm."{t}" ORDER BY ALL').to_arrow_table()
            for t in VOCABULARY_TABLES
        }
        if local_concepts:
            concept = vocabulary["concept"]
            added = pa.Table.from_pylist(list(local_concepts), schema=concept.schema)
            vocabulary["concept"] = pa.concat_tables([concept, added])
        write_tables(folder / DATA / VOCABULARY, vocabulary)
        made: dict[str, dict] = {}
        for name, (where, changes) in variants.items():
            tables = {
                t: con.sql(_select(con, t, where, changes.get(t, {}))).to_arrow_table()
                for t in PERSON_TABLES
            }
            location = con.sql("SELECT * FROM cdm.location ORDER BY ALL")
            tables["location"] = location.to_arrow_table()
            tables.update((vocabularies or {}).get(name, {}))
            write_tables(folder / DATA / name, tables)
            made[name] = {t: table.num_rows for t, table in tables.items()}
    finally:
        con.close()
    with Executor(base) as ex:
        base_fingerprint = ex.fingerprint
    listed = []
    for name, rows in made.items():
        sha = data_sha256(variant_files(folder, name))
        unchecked = Variant(name, folder / DATA / name, sha, "", rows)
        stub = Suite(folder, task_set_sha256, base_fingerprint, 0, {}, (unchecked,))
        with Executor(variant_database(stub, unchecked, cache)) as ex:
            listed.append(Variant(name, folder / DATA / name, sha, ex.fingerprint, rows))
    (folder / MANIFEST).write_text(
        manifest_text(
            task_set_sha256=task_set_sha256,
            base_fingerprint=base_fingerprint,
            seed=0,
            settings={"made_by": "tests/score/suite/made_suite.py"},
            variants=listed,
            drops=drops or {},
            differ_on=differ_on,
        ),
        encoding="utf-8",
    )
    return read_suite(folder)


def suite_tasks() -> list[dict]:
    """The planted tasks the made suite is built for (see the module docstring):
    ``s-count`` (in English and Korean), ``s-gender`` (persons of a known gender: all of
    them on the base database, not on ``v3-genders``), ``s-dropped`` (a task the suite
    drops) and ``s-none`` (unanswerable)."""
    from tests.task_factory import make_task

    gender = "SELECT count(*) AS n FROM cdm.person WHERE gender_concept_id IN (8507, 8532)"
    return [
        make_task("s-count", languages=("en", "ko")),
        make_task("s-gender", gender),
        make_task("s-dropped"),
        make_task("s-none", None),
    ]


#: What the made suite drops, as a builder would (task id -> why).
SUITE_DROPS = {"s-dropped": "gold and reference answer differ on variant v2-thirds"}
