"""The curation pipeline: source records in, verified task records and a verdict per record out.

Stages, each named in a drop (see DESIGN.md):

``ohdsi``        SqlRender placeholders, parameters and blocks resolved; scripts made one
                 query (:mod:`curate.ohdsi.render`, :mod:`curate.ohdsi.script`)
``transpile``    SQL Server (or PostgreSQL) to DuckDB with fix-up rules
                 (:mod:`curate.transpile.to_duckdb`)
``verify``       the gold runs and meets the reference rules (:mod:`curate.verify.gold`);
                 its smells drop or warn (:mod:`curate.verify.smells`)
``answer``       the reference answer returns the gold's result under the scoring profile
``unanswerable`` the empty tables / all-NULL columns an unanswerable record names really are
``tier``         tier and features from the gold's AST (:mod:`curate.tasks.tiers`)
``validate``     the task record against ``schemas/task.schema.json``
``internal``     an unexpected exception while curating the record (its type and message)

After every record, rule ``max_per_result`` (off unless asked) drops kept tasks beyond
the first N whose golds return the very same result, and rule ``suite_disagreement``
(with a test suite, ``curate --suite``) drops kept tasks the suite drops: their gold and
reference answer differ, or their gold fails, on one of its database variants.

The pipeline knows nothing of click or the terminal; the CLI calls :func:`curate_records`.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlglot import exp

from curate.reading.ahead import Reading, read_record, reading_ahead
from curate.reading.gold import read_gold
from curate.reading.templates import TemplateCache
from curate.sources.records import SourceRecord
from curate.tasks.per_result import limit_per_result
from curate.tasks.record import task_record
from curate.tasks.tiers import classify_tier, extract_features
from curate.tasks.validated import validated
from curate.tasks.verdict import Verdict, dropped
from curate.transpile.sqlglot_log import current_setting, route_sqlglot_warnings
from curate.transpile.to_duckdb import Transpiled
from curate.verify.alternatives import verify_alternatives, with_alternatives
from curate.verify.answer_runs import AnswerRuns, start_answer
from curate.verify.gold import Drop, check_answer, check_unanswerable, internal_drop, run_gold
from curate.verify.identical_results import ResultPrint
from curate.verify.nocase import NocaseExecutor, open_nocase
from curate.verify.omop_advisories import (
    concept_filters,
    static_advisories,
    with_concept_advisories,
)
from curate.verify.paired_checks import checked_in_order
from curate.verify.reference_rules import ReferenceRules
from curate.verify.semantics import collation_drop, collation_warned, unresolved, unresolved_drop
from curate.verify.shuffled_copy import ShuffledCopy, check_smells, open_shuffled
from curate.verify.smells import SmellRules
from score.comparison.order_matters import ordered_result
from score.comparison.result_hash import result_sha256
from score.defaults import DEFAULT_CACHE
from score.errors import DatabaseError
from score.execution.executor import Executor, ExecutorSettings
from score.execution.guard import check_statement
from score.execution.result import QueryError, QueryResult
from score.scoring.gold_cache import GoldCache
from score.scoring.gold_pin import task_today

#: The dialect of every gold and answer curation runs (transpiled to it first): on an
#: engine of another dialect the executor transpiles once more, as scoring does.
CURATION_DIALECT = "duckdb"


@dataclass(frozen=True)
class CurationOptions:
    rules: ReferenceRules = field(default_factory=ReferenceRules)
    profile: str = "sqlgold"  # the comparator profile that will score the tasks
    # SQL Server's default collation ignores case; DuckDB's does not.  A SQL Server gold
    # whose transpile warns about text comparison, grouping or sorting is run again
    # under a case-insensitive collation and dropped if the two results differ.
    collation_check: bool = True
    # A transpile warning nothing settles (curate.verify.semantics) drops the record.
    unresolved_semantics: bool = True
    # Keep at most this many tasks whose gold results are identical (None: keep all).
    max_per_result: int | None = None
    # Write records that only rename a template's holes from its first (checked) reading.
    template_cache: bool = True
    # A test suite's drops (task id -> why): such tasks are dropped (rule suite_disagreement).
    suite_drops: Mapping[str, str] = field(default_factory=dict)
    # Where the kept golds' results are left for scoring (score.scoring.gold_cache): a
    # scoring on the same database then runs no gold curation verified.  None: nowhere.
    gold_cache: Path | None = DEFAULT_CACHE
    smells: SmellRules = field(default_factory=SmellRules)  # gold smells (verify/smells.py)
    advisories: bool = True  # OMOP advisories (verify/omop_advisories.py): never a drop


#: The rule of a task a test suite drops (``curate --suite``).
SUITE_RULE = "suite_disagreement"


@dataclass(frozen=True)
class CurationContext:
    """The executors and options every record is curated with.

    ``nocase`` runs on the same data under a case-insensitive collation, for the
    collation check (None when the check is off or cannot run on the engine); ``answers``
    runs reference answers beside their golds (None: after them); make one with
    :func:`curation_context`.
    """

    executor: Executor
    options: CurationOptions
    nocase: NocaseExecutor | None
    templates: TemplateCache = field(
        default_factory=lambda: TemplateCache(read_gold, enabled=False)
    )
    answers: AnswerRuns | None = None
    golds: GoldCache | None = None  # where the kept golds' results are left for scoring
    shuffled: ShuffledCopy | None = None  # the database, its rows in another order


@contextmanager
def curation_context(
    executor: Executor, options: CurationOptions | None = None
) -> Iterator[CurationContext]:
    options = options or CurationOptions()
    if executor.dialect != CURATION_DIALECT and executor.sql_dialect != CURATION_DIALECT:
        raise ValueError(
            f"curation runs {CURATION_DIALECT} SQL: open the {executor.engine} executor with "
            f"sql_dialect={CURATION_DIALECT!r} (it would run the golds untranslated)"
        )
    # the check runs golds again under a case-insensitive collation: DuckDB's NOCASE or
    # PostgreSQL's twin schema; elsewhere the report says it did not run
    nocase = open_nocase(executor, options.collation_check)
    templates = TemplateCache(read_gold, enabled=options.template_cache)
    answers = AnswerRuns(executor)
    golds = None if options.gold_cache is None else GoldCache(options.gold_cache, executor)
    shuffled = open_shuffled(executor, options.smells)
    ended = False  # by an exception (Ctrl-C): the answer under way is not waited for
    try:
        yield CurationContext(executor, options, nocase, templates, answers, golds, shuffled)
    except BaseException:
        ended = True
        raise
    finally:
        answers.close(wait=not ended)
        if nocase is not None:
            nocase.close()
        if shuffled is not None:
            shuffled.close()


def verify_gold(
    gold: Transpiled,
    ctx: CurationContext,
    *,
    order_matters: bool,
    tree: exp.Expression | None = None,
) -> tuple[QueryResult | Drop, tuple[str, ...]]:
    """The gold's result if it meets every reference rule, else the Drop; and its open warnings.

    The same checks whether a record is curated or one pair is verified (``sqlgold
    verify``): transpile warnings nothing settles (rule ``unresolved_semantics``), the
    reference rules (:func:`curate.verify.gold.run_gold`) and the collation check.
    """
    options = ctx.options
    open_warnings = unresolved(gold.warnings, collation_checked=ctx.nocase is not None)
    drop = unresolved_drop(open_warnings) if options.unresolved_semantics else None
    if drop:
        return drop, open_warnings
    collation_checked = ctx.nocase is not None and collation_warned(gold.warnings)
    run = run_gold(
        gold.sql,
        ctx.executor,
        options.rules,
        order_matters=order_matters,
        profile=options.profile,
        tree=tree,
        keys_wanted=collation_checked and order_matters,  # its tied rows, for the check
    )
    if isinstance(run, Drop):
        return run, open_warnings
    drop = collation_drop(
        gold.sql,
        gold.warnings,
        run.result,
        ctx.nocase,
        order_matters=order_matters,
        profile=options.profile,
        order_keys=run.order_keys,
        deterministic=options.rules.deterministic,
    )
    return drop or run.result, open_warnings


def _parsed(sql: str) -> exp.Expression | None:
    """The guard's tree of a gold (None if the guard refuses it: run_gold says why)."""
    try:
        return check_statement(sql)
    except QueryError:
        return None


class _Stage:
    """The stage a record is in, so an unexpected error can say where it happened."""

    name = "ohdsi"


def curate_record(
    record: SourceRecord, ctx: CurationContext, ahead: Future[Reading] | None = None
) -> tuple[dict[str, Any] | None, Verdict]:
    """The task record for ``record`` (or None) and the verdict saying why; ``ahead`` is
    its reading when it was read ahead (:mod:`curate.reading.ahead`).

    No record can end a run: any exception while curating it becomes a drop (stage
    ``internal``, the exception's type and message, and the stage it happened in).  A
    database that went away (:class:`~score.errors.DatabaseError`) is no record's: it ends
    the run.
    """
    stage = _Stage()
    try:
        return _curate(record, ctx, stage, ahead)
    except DatabaseError:  # the database went away: no record's drop, the run's error
        raise
    except Exception as error:  # noqa: BLE001 - one record's failure is that record's drop
        where = getattr(error, "sqlgold_stage", stage.name)  # set by read_gold
        return dropped(record.id, internal_drop(error, where), [])


def _curate(
    record: SourceRecord, ctx: CurationContext, stage: _Stage, ahead: Future[Reading] | None
) -> tuple[dict[str, Any] | None, Verdict]:
    executor, options = ctx.executor, ctx.options
    notes: list[str] = []
    if not record.answerable:
        stage.name = "unanswerable"
        because = record.unanswerable_because
        drop = check_unanswerable(
            because.empty_tables if because else (),
            because.null_columns if because else (),
            executor,
            because.declared if because else None,
        )
        if drop:
            return dropped(record.id, drop, notes)
        stage.name = "validate"
        task = task_record(record, None, None, "unanswerable", {}, False, None, (), executor)
        return validated(task, notes)
    stage.name = "ohdsi"
    read = ahead.result() if ahead else read_record(record, ctx.templates)
    gold = read.gold
    notes.extend(read.notes)
    if isinstance(gold, Drop):
        return dropped(record.id, gold, notes)
    gold_sql = gold.sql
    answer_run, answer = start_answer(read, ctx.answers)
    stage.name = "verify"
    tree = _parsed(gold_sql)  # the guard's parse, shared by every check, the tier and order
    if tree is None:
        order = bool(record.order_matters)
    elif record.order_matters is not None:
        order = record.order_matters
    else:
        order = ordered_result(tree)
    result, warnings = verify_gold(gold, ctx, order_matters=order, tree=tree)
    if isinstance(result, Drop):
        return dropped(record.id, result, notes, gold_sql)
    alternatives = verify_alternatives(
        record, lambda alt, t: verify_gold(alt, ctx, order_matters=order, tree=t)[0]
    )
    if isinstance(alternatives, Drop):
        return dropped(record.id, alternatives, notes, gold_sql)
    printed = ResultPrint.of(result, ordered=order)
    answer_sql = None
    if answer is not None:  # the record has a reference answer
        stage.name = "answer"
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, Drop):
            return dropped(record.id, Drop("answer", answer.rule, answer.reason), notes, gold_sql)
        answer_open = unresolved(answer.warnings, collation_checked=False)
        drop = unresolved_drop(answer_open, "answer") if options.unresolved_semantics else None
        if drop:
            return dropped(record.id, drop, notes, gold_sql)
        warnings += tuple(f"answer_sql: {w}" for w in answer_open)
        answer_sql = answer.sql
        ran = answer_run.result() if answer_run is not None else None
        golds = [result, *(a.result for a in alternatives)]
        drop = check_answer(
            golds, answer_sql, executor, order_matters=order, profile=options.profile, ran=ran
        )
        if drop:
            return dropped(record.id, drop, notes, gold_sql)
    stage.name = "verify"
    drop, smells = check_smells(
        record.question,
        gold_sql,
        tree,
        result,
        options.smells,
        ctx.shuffled,
        profile=options.profile,
        order_matters=order,
    )
    if drop:
        return dropped(record.id, drop, notes, gold_sql)
    gold_result = {
        "sha256": result_sha256(result, ordered=order),
        "rows": result.num_rows,
        "columns": list(result.columns),
        "types": list(result.types),
    }
    stage.name = "tier"
    task = task_record(
        record,
        gold_sql,
        answer_sql,
        classify_tier(tree if tree is not None else gold_sql),
        extract_features(tree if tree is not None else gold_sql),
        order,
        gold_result,
        tuple(gold.rules),
        executor,
    )
    task = with_alternatives(task, alternatives, order_matters=order)
    stage.name = "validate"
    advice = static_advisories(tree) if options.advisories else []
    concepts = tuple(concept_filters(tree).items()) if options.advisories else ()
    kept = validated(task, notes, warnings, printed, smells, tuple(advice), concepts)
    if kept[0] is not None and ctx.golds is not None:
        for sql, ran in [(gold_sql, result), *((a.gold.sql, a.result) for a in alternatives)]:
            ctx.golds.put(sql, ran, today=task_today(kept[0]))
    return kept


_WORKER: CurationContext | None = None
_WORKER_SCOPE: Any = None  # keeps the context manager (and its executors) open


def _start_worker(
    db_path: str,
    schema: str,
    settings: ExecutorSettings,
    options: CurationOptions,
    quiet: bool | None,
) -> None:
    """Open this worker process's own executors (DuckDB handles do not cross processes)."""
    global _WORKER, _WORKER_SCOPE
    if quiet is not None:
        route_sqlglot_warnings(quiet=quiet)
    executor = Executor(db_path, schema, settings, sql_dialect=CURATION_DIALECT)
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

    With one job, records are read ahead on one thread (:mod:`curate.reading.ahead`) and
    checked two at a time (:mod:`curate.verify.paired_checks`), so their queries overlap this
    process's Python work.  With ``jobs`` > 1 records are curated in that many worker
    processes, each with its own read-only executors on the same database (transpiling
    and comparing hold the GIL: processes run those at once too).  The result is the
    same either way.
    """
    records = list(records)
    options = options or CurationOptions()
    outcomes: list[tuple[dict[str, Any] | None, Verdict]] = []
    if jobs > 1 and len(records) > 1:
        pool = ProcessPoolExecutor(
            max_workers=jobs,
            mp_context=multiprocessing.get_context("spawn"),  # no forked DuckDB threads
            initializer=_start_worker,
            initargs=(
                executor.db_path,
                executor.schema,
                executor.settings,
                options,
                current_setting(),
            ),
        )
        with pool:
            work = pool.map(_curate_in_worker, records, chunksize=4)
            try:
                for record, outcome in zip(records, work, strict=True):
                    outcomes.append(outcome)
                    if progress:
                        progress(record)
            except DatabaseError:
                raise
            except Exception as error:  # noqa: BLE001 - a worker died: drop what it held
                for record in records[len(outcomes) :]:
                    outcomes.append(dropped(record.id, internal_drop(error, "worker"), []))
                    if progress:
                        progress(record)
    else:
        with curation_context(executor, options) as ctx:
            with reading_ahead(records, ctx.templates) as readings:
                outcomes = checked_in_order(
                    records, readings, lambda r, a: curate_record(r, ctx, a), progress
                )
    if options.advisories:  # one lookup of every concept the kept golds filter by
        outcomes = with_concept_advisories(outcomes, executor)
    if options.max_per_result is not None:
        outcomes = limit_per_result(outcomes, options.max_per_result)
    if options.suite_drops:
        outcomes = [
            dropped(v.id, Drop("suite", SUITE_RULE, options.suite_drops[v.id]), list(v.notes))
            if task is not None and v.id in options.suite_drops
            else (task, v)
            for task, v in outcomes
        ]
    tasks = sorted((t for t, _ in outcomes if t is not None), key=lambda t: t["id"])
    verdicts = sorted((v for _, v in outcomes), key=lambda v: v.id)
    return tasks, verdicts
