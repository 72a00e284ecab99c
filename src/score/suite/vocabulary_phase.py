"""The build's vocabulary phase: vocabulary variants for the near misses left alive.

Once the clinical candidates are done (:mod:`score.suite.build`), up to
:data:`VOCABULARY_CANDIDATES` vocabulary variants (:mod:`score.suite.vocabulary_variants`)
are made for the near misses still alive whose gold names a vocabulary table, the kinds
in turn: each holds the first kept variant's clinical rows, is screened in a trial
database of its own and confirmed through the executor
(:func:`score.suite.confirm.confirm_candidate`), and is kept only where every reference
answer still returns its gold's result.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from score.execution.result import QueryResult
from score.execution.settings import ExecutorSettings
from score.suite.build_settings import BuildSettings
from score.suite.confirm import confirm_candidate
from score.suite.distill import Distillation
from score.suite.query_runs import SuiteTask, golds_run, on_trial, told_apart
from score.suite.suite_file import (
    DATA,
    VOCABULARY_TABLES,
    Variant,
    data_sha256,
    variant_files,
    write_duckdb,
    write_tables,
)
from score.suite.trial_database import TrialDatabase
from score.suite.vocabulary_variants import KINDS as VOCABULARY_KINDS
from score.suite.vocabulary_variants import concepts_used, reads_vocabulary, vocabulary_variant

#: vocabulary variants made and tried once the clinical candidates are done
VOCABULARY_CANDIDATES = 12


def vocabulary_phase(
    vocabulary: Mapping[str, Any],
    found: Mapping[str, SuiteTask],
    answerable: Sequence[Mapping[str, Any]],
    distillation: Distillation,
    variants: list[Variant],
    gold_failures: dict[str, list[str]],
    drops: dict[str, str],
    differ_on: dict[str, list[str]],
    staging: Path,
    cache: Path,
    s: BuildSettings,
    ex_settings: ExecutorSettings,
    progress: Callable[..., None] | None,
) -> int:
    """Vocabulary variants (:mod:`score.suite.vocabulary_variants`) for the near misses
    the clinical candidates left alive whose gold reads a vocabulary table: each screened
    in a trial database of its own, then confirmed through the executor; kept only if
    every reference answer still returns its gold's result there.  How many were tried."""
    reading = {tid for tid, item in found.items() if reads_vocabulary(item.task["gold_sql"])}
    # the clinical rows of the first variant kept (where every gold runs and agrees with
    # its reference answer), so a vocabulary variant differs from it in its vocabulary only
    clinical = _clinical_tables(variants[0].folder) if variants else {}
    used = concepts_used(clinical)
    tried = 0
    for n in range(VOCABULARY_CANDIDATES):
        aimed = sorted({t for t, _ in distillation.alive if t in reading})
        if not aimed or len(distillation.kept) >= s.max_databases:
            break
        tried += 1
        if progress:
            progress(
                n + 1,
                VOCABULARY_CANDIDATES,
                stage="vocabulary variants",
                note=f"near misses left: {len(distillation.alive)}",
                eta=False,
            )
        name = f"w{n:04d}"
        kind = VOCABULARY_KINDS[n % len(VOCABULARY_KINDS)]
        tables = vocabulary_variant(
            vocabulary,
            [found[t].task["gold_sql"] for t in aimed],
            kind,
            f"{s.seed}:{name}",
            used=used,
        )
        keys = sorted(k for k in distillation.alive if k[0] in set(aimed))
        trial = TrialDatabase(
            tables,
            timeout_seconds=ex_settings.timeout_seconds,
            max_rows=ex_settings.max_rows,
            collation=ex_settings.collation,
        )
        try:
            trial.load(clinical)
            run = on_trial(trial)
            by_task: dict[str, QueryResult] = {}
            items = [found[t] for t in aimed]
            if not golds_run(run, items, by_task, name, gold_failures, distillation):
                continue
            new = told_apart(run, keys, found, by_task, s.profile)
        finally:
            trial.close()
        if not new:
            continue
        folder = staging / DATA / name
        tables = {**clinical, **tables}
        write_tables(folder, tables)
        database = cache / f"{name}.duckdb"
        write_duckdb(database, variant_files(staging, name))
        kept = confirm_candidate(
            database,
            name,
            new,
            found,
            answerable,
            distillation,
            gold_failures,
            drops,
            differ_on,
            ex_settings,
            jobs=s.jobs,
            profile=s.profile,
            refuse_disagreement=True,
        )
        database.unlink()
        if kept is None:
            shutil.rmtree(folder)
            continue
        final = f"v{len(variants) + 1:02d}"
        folder.rename(staging / DATA / final)
        variants.append(
            Variant(
                final,
                staging / DATA / final,
                data_sha256(variant_files(staging, final)),
                kept,
                {t: tables[t].num_rows for t in sorted(tables)},
            )
        )
        distillation.rename(name, final)
    return tried


def _clinical_tables(folder: Path) -> dict[str, Any]:
    """The clinical tables a variant's folder holds (name -> Arrow table)."""
    import pyarrow.parquet as pq

    return {
        p.stem: pq.read_table(p)
        for p in sorted(folder.glob("*.parquet"))
        if p.stem not in VOCABULARY_TABLES
    }
