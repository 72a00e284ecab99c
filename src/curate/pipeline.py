"""The curation pipeline: source records in, verified task records and a verdict per record out.

Stages, each named in a drop (see DESIGN.md):

``ohdsi``        SqlRender placeholders, parameters and blocks resolved; scripts made one
                 query (:mod:`curate.ohdsi.render`, :mod:`curate.ohdsi.script`)
``transpile``    SQL Server (or PostgreSQL) to DuckDB with fix-up rules
                 (:mod:`curate.transpile.to_duckdb`)
``verify``       the gold runs and meets the reference rules (:mod:`curate.verify.gold`)
``answer``       the reference answer returns the gold's result under the scoring profile
``unanswerable`` the empty tables / all-NULL columns an unanswerable record names really are
``tier``         tier and features from the gold's AST (:mod:`curate.tiers`)
``validate``     the task record against ``schemas/task.schema.json``

The pipeline knows nothing of click or the terminal; the CLI calls :func:`curate_records`.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

from curate.ohdsi.errors import RenderError
from curate.ohdsi.render import render_record
from curate.sources import READ_DIALECT
from curate.sources.records import SourceRecord
from curate.tiers import classify_tier, extract_features
from curate.transpile.to_duckdb import Transpiled, TranspileError, transpile
from curate.verify.gold import Drop, check_answer, check_unanswerable, run_gold
from curate.verify.reference_rules import ReferenceRules
from score.compare import compare
from score.executor import Executor, ExecutorSettings
from score.order import order_matters as gold_orders_rows
from score.result import QueryResult
from score.schemas import validation_errors

TASK_SCHEMA_VERSION = "1.0"

#: What each source dialect is read as by the transpiler (after OHDSI rendering).


@dataclass(frozen=True)
class CurationOptions:
    rules: ReferenceRules = field(default_factory=ReferenceRules)
    profile: str = "sqlgold"  # the comparator profile that will score the tasks
    # SQL Server's default collation ignores case; DuckDB's does not.  A SQL Server gold
    # whose transpile warns about text comparison, grouping or sorting is run again
    # under DuckDB's NOCASE collation and dropped if the two results differ.
    collation_check: bool = True


@dataclass(frozen=True)
class Verdict:
    """What curation decided for one source record."""

    id: str
    status: str  # "kept" or "dropped"
    stage: str | None = None
    rule: str | None = None
    reason: str | None = None
    tier: str | None = None
    notes: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "status": self.status}
        if self.status == "dropped":
            out.update(stage=self.stage, rule=self.rule, reason=self.reason)
        else:
            out["tier"] = self.tier
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def _dropped(record_id: str, drop: Drop, notes: list[str]) -> tuple[None, Verdict]:
    return None, Verdict(
        record_id, "dropped", drop.stage, drop.rule, drop.reason, notes=tuple(notes)
    )


def _to_duckdb(sql: str, dialect: str | None, field_name: str) -> Transpiled | Drop:
    read = READ_DIALECT.get(dialect or "")
    if read is None:
        return Drop("transpile", "dialect", f"{field_name}: unknown dialect {dialect!r}")
    try:
        return transpile(sql, read=read)
    except TranspileError as e:
        rule = getattr(e, "rule", None) or "transpile"
        return Drop("transpile", rule, f"{field_name}: {e.message}")


def _collation_drop(
    gold: Transpiled, result: QueryResult, nocase: Executor | None, order: bool, profile: str
) -> Drop | None:
    """Drop a SQL Server gold whose result depends on case-sensitive text handling."""
    if nocase is None or not any(w.startswith("collation") for w in gold.warnings):
        return None
    other = nocase.try_execute(gold.sql)
    if (
        isinstance(other, QueryResult)
        and compare(result, other, profile, order_matters=order).match
    ):
        return None
    return Drop(
        "verify",
        "case_insensitive_collation",
        "SQL Server's default collation ignores case and under it this gold returns a "
        "different result; make the text comparison, grouping or order independent of case",
    )


@dataclass(frozen=True)
class CurationContext:
    """The executors and options every record is curated with.

    ``nocase`` runs on the same database with a case-insensitive collation, for the
    collation check (None when the check is off); make one with :func:`curation_context`.
    """

    executor: Executor
    options: CurationOptions
    nocase: Executor | None


@contextmanager
def curation_context(
    executor: Executor, options: CurationOptions | None = None
) -> Iterator[CurationContext]:
    options = options or CurationOptions()
    nocase = None
    if options.collation_check:
        settings = replace(executor.settings, collation="nocase")
        nocase = Executor(executor.db_path, executor.schema, settings)
    try:
        yield CurationContext(executor, options, nocase)
    finally:
        if nocase is not None:
            nocase.close()


def curate_record(
    record: SourceRecord, ctx: CurationContext
) -> tuple[dict[str, Any] | None, Verdict]:
    """The task record for ``record`` (or None) and the verdict saying why."""
    executor, options, nocase = ctx.executor, ctx.options, ctx.nocase
    notes: list[str] = []
    if not record.answerable:
        because = record.unanswerable_because
        drop = check_unanswerable(
            because.empty_tables if because else (),
            because.null_columns if because else (),
            executor,
        )
        if drop:
            return _dropped(record.id, drop, notes)
        task = _task(record, None, None, "unanswerable", {}, False, None, ())
        return _validated(task, notes)
    try:
        rendered, render_notes = render_record(record)
    except RenderError as e:
        return _dropped(record.id, Drop("ohdsi", e.reason, e.message), notes)
    notes.extend(render_notes)
    gold = _to_duckdb(rendered.gold_sql, rendered.gold_dialect, "gold_sql")
    if isinstance(gold, Drop):
        return _dropped(record.id, gold, notes)
    gold_sql = gold.sql
    order = record.order_matters if record.order_matters is not None else gold_orders_rows(gold_sql)
    result = run_gold(
        gold_sql, executor, options.rules, order_matters=order, profile=options.profile
    )
    if isinstance(result, Drop):
        return _dropped(record.id, result, notes)
    drop = _collation_drop(gold, result, nocase, order, options.profile)
    if drop:
        return _dropped(record.id, drop, notes)
    answer_sql = None
    if rendered.answer_sql is not None:
        answer = _to_duckdb(rendered.answer_sql, rendered.answer_dialect, "answer_sql")
        if isinstance(answer, Drop):
            return _dropped(record.id, Drop("answer", answer.rule, answer.reason), notes)
        answer_sql = answer.sql
        drop = check_answer(
            result, answer_sql, executor, order_matters=order, profile=options.profile
        )
        if drop:
            return _dropped(record.id, drop, notes)
    gold_result = {
        "rows": result.num_rows,
        "columns": list(result.columns),
        "types": list(result.types),
    }
    task = _task(
        record,
        gold_sql,
        answer_sql,
        classify_tier(gold_sql),
        extract_features(gold_sql),
        order,
        gold_result,
        tuple(gold.rules),
    )
    return _validated(task, notes)


def _task(
    record: SourceRecord,
    gold_sql: str | None,
    answer_sql: str | None,
    tier: str,
    features: dict[str, Any],
    order: bool,
    gold_result: dict[str, Any] | None,
    rules_applied: tuple[str, ...],
) -> dict[str, Any]:
    questions = dict(record.questions or {})
    questions.setdefault("en", record.question)
    because = record.unanswerable_because
    return {
        "schema_version": TASK_SCHEMA_VERSION,
        "id": record.id,
        "question": record.question,
        "questions": dict(sorted(questions.items())),
        "gold_sql": gold_sql,
        "source_sql": record.gold_sql,
        "source_dialect": record.gold_dialect,
        "answer_sql": answer_sql,
        "answer_dialect": "duckdb" if answer_sql is not None else None,
        "tier": tier,
        "features": features,
        "category": record.category,
        "difficulty": record.difficulty,
        "answerable": record.answerable,
        "order_matters": order,
        "unanswerable_because": None
        if because is None
        else {
            "empty_tables": list(because.empty_tables),
            "null_columns": list(because.null_columns),
        },
        "gold_result": gold_result,
        "transpile_rules": sorted(set(rules_applied)),
        "origin": _origin(record),
        "notes": record.notes,
    }


def _origin(record: SourceRecord) -> str | None:
    o = record.origin
    if o is None:
        return None
    parts = [o.importer, o.file or "", o.page or ""]
    return ":".join(p for p in parts if p) or None


def _validated(task: dict[str, Any], notes: list[str]) -> tuple[dict[str, Any] | None, Verdict]:
    problems = validation_errors("task", task)
    if problems:
        drop = Drop("validate", "task_schema", "; ".join(problems))
        return _dropped(task["id"], drop, notes)
    return task, Verdict(task["id"], "kept", tier=task["tier"], notes=tuple(notes))


_WORKER: CurationContext | None = None
_WORKER_SCOPE: Any = None  # keeps the context manager (and its executors) open


def _start_worker(
    db_path: str, schema: str, settings: ExecutorSettings, options: CurationOptions
) -> None:
    """Open this worker process's own executors (DuckDB handles do not cross processes)."""
    global _WORKER, _WORKER_SCOPE
    executor = Executor(db_path, schema, settings)
    _WORKER_SCOPE = curation_context(executor, options)
    _WORKER = _WORKER_SCOPE.__enter__()


def _curate_in_worker(record: SourceRecord) -> tuple[dict[str, Any] | None, Verdict]:
    assert _WORKER is not None, "worker not started"
    return curate_record(record, _WORKER)


def curate_records(
    records: Iterable[SourceRecord],
    executor: Executor,
    options: CurationOptions | None = None,
    *,
    jobs: int = 1,
    progress: Callable[[SourceRecord], None] | None = None,
) -> tuple[list[dict[str, Any]], list[Verdict]]:
    """Curate every record; return the kept tasks sorted by id and a verdict per record.

    With ``jobs`` > 1 records are curated in that many worker processes, each with its
    own read-only executors on the same database (transpiling and comparing hold the
    GIL, so threads would not help); the result is the same as with one job.
    """
    records = list(records)
    options = options or CurationOptions()
    outcomes: list[tuple[dict[str, Any] | None, Verdict]] = []
    if jobs > 1 and len(records) > 1:
        pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),  # no forked DuckDB threads
            initializer=_start_worker,
            initargs=(executor.db_path, executor.schema, executor.settings, options),
        )
        with pool:
            work = pool.map(_curate_in_worker, records, chunksize=4)
            for record, outcome in zip(records, work, strict=True):
                outcomes.append(outcome)
                if progress:
                    progress(record)
    else:
        with curation_context(executor, options) as ctx:
            for record in records:
                outcomes.append(curate_record(record, ctx))
                if progress:
                    progress(record)
    tasks = sorted((t for t, _ in outcomes if t is not None), key=lambda t: t["id"])
    verdicts = sorted((v for _, v in outcomes), key=lambda v: v.id)
    return tasks, verdicts
