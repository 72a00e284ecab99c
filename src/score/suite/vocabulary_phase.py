"""The build's vocabulary phase: vocabulary variants for the near misses left alive.

Once the clinical candidates are done (:mod:`score.suite.build`), up to
:data:`VOCABULARY_CANDIDATES` vocabulary variants (:mod:`score.suite.vocabulary_variants`)
are made for the near misses still alive whose gold names a vocabulary table, the kinds
in turn: each holds the first kept variant's clinical rows, is screened in a trial
database of its own and confirmed through the executor
(:func:`score.suite.confirm.keep_candidate`), and is kept only where every reference
answer still returns its gold's result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from score.execution.result import QueryResult
from score.suite.build_settings import BuildSettings
from score.suite.confirm import BuildState, keep_candidate
from score.suite.query_runs import golds_run, on_trial, told_apart
from score.suite.suite_file import VOCABULARY_TABLES
from score.suite.trial_database import TrialDatabase
from score.suite.vocabulary_variants import KINDS as VOCABULARY_KINDS
from score.suite.vocabulary_variants import concepts_used, reads_vocabulary, vocabulary_variant

#: vocabulary variants made and tried once the clinical candidates are done
VOCABULARY_CANDIDATES = 12


def vocabulary_phase(
    vocabulary: Mapping[str, Any],
    state: BuildState,
    s: BuildSettings,
    progress: Callable[..., None] | None,
) -> int:
    """Vocabulary variants (:mod:`score.suite.vocabulary_variants`) for the near misses
    the clinical candidates left alive whose gold reads a vocabulary table: each screened
    in a trial database of its own, then confirmed through the executor; kept only if
    every reference answer still returns its gold's result there.  How many were tried."""
    found, distillation, ex_settings = state.found, state.distillation, state.ex_settings
    reading = {tid for tid, item in found.items() if reads_vocabulary(item.task["gold_sql"])}
    # the clinical rows of the first variant kept (where every gold runs and agrees with
    # its reference answer), so a vocabulary variant differs from it in its vocabulary only
    clinical = _clinical_tables(state.variants[0].folder) if state.variants else {}
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
            if not golds_run(run, items, by_task, name, state.gold_failures, distillation):
                continue
            new = told_apart(run, keys, found, by_task, s.profile)
        finally:
            trial.close()
        if new:
            keep_candidate(state, {**clinical, **tables}, name, new, refuse_disagreement=True)
    return tried


def _clinical_tables(folder: Path) -> dict[str, Any]:
    """The clinical tables a variant's folder holds (name -> Arrow table)."""
    import pyarrow.parquet as pq

    return {
        p.stem: pq.read_table(p)
        for p in sorted(folder.glob("*.parquet"))
        if p.stem not in VOCABULARY_TABLES
    }
