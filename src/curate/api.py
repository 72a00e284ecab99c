"""sqlgold's public Python API for curation: curate a source file, verify one pair,
publish a release.  ``import curate`` gives these names (:data:`curate.__all__`).

Every function takes the command line's defaults (``sqlgold curate --help`` ...): the
embedded database unless told another, the same reference rules, limits and outputs,
so a task file made here and one made by the command are byte-identical.  Settings
files (``sqlgold.toml``) are the command line's: a library caller passes what it wants.
Errors are :class:`score.errors.SqlgoldError`, naming the file, line or task and the
stage; a failed call leaves no half-written file.

>>> import curate
>>> done = curate.curate_file("omop_source.jsonl")  # doctest: +SKIP
>>> done.kept, done.dropped, done.tasks_path  # doctest: +SKIP
(277, 5, PosixPath('omop_tasks.jsonl'))

This module imports nothing heavy: each function imports its machinery when called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curate.verify.reference_rules import ReferenceRules
from curate.verify.smells import SmellRules
from score.api import Database, database, limits

if TYPE_CHECKING:
    from curate.publish.release import PublishResult
    from curate.verify.pair import PairCheck
    from score.execution.settings import ExecutorSettings


@dataclass(frozen=True)
class Curation:
    """A curation written: the task file, the report (JSON; its ``.md`` and the review
    page ``.html`` beside it) and the report's content."""

    tasks_path: Path
    report_path: Path
    report: dict[str, Any]
    tasks: list[dict[str, Any]]
    replaced: bool = False  # an earlier curation's task file was there, and was replaced

    @property
    def counts(self) -> dict[str, Any]:
        """Records read, kept (by tier), dropped (by rule)."""
        return self.report["counts"]

    @property
    def kept(self) -> int:
        return self.counts["kept"]

    @property
    def dropped(self) -> int:
        return self.counts["dropped"]


def curate_file(
    source: str | Path,
    *,
    fmt: str = "jsonl",
    db: Database = None,
    schema: str | None = None,
    out: str | Path | None = None,
    report: str | Path | None = None,
    profile: str = "sqlgold",
    rules: ReferenceRules | None = None,
    allow_unresolved_semantics: bool = False,
    smells: SmellRules | None = None,
    advisories: bool = True,
    max_per_result: int | None = None,
    against: str | Path | None = None,
    suite: str | Path | None = None,
    cache: bool = True,
    jobs: int = 1,
    settings: ExecutorSettings | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Curation:
    """Curate ``source`` (a file or folder of source records in format ``fmt``: jsonl,
    querylibrary, funsql or text2omop) into a verified task file, as ``sqlgold curate``
    does.

    ``out`` defaults to ``<name>_tasks.jsonl`` in the current folder and ``report`` to
    ``<name>_report.json`` beside it; ``rules`` are the reference rules
    (:class:`ReferenceRules`: its defaults are the command's); ``smells`` the gold
    smells checked (:class:`SmellRules`: the command's defaults) and ``advisories``
    whether the OMOP advisories run (they never drop); ``against`` is a task
    file verified elsewhere to compare gold results with; ``suite`` a test suite whose
    drops are dropped; ``cache`` leaves the kept golds' results in the gold cache for
    scoring; ``settings`` are the query limits (:func:`score.limits`), whose ``today``
    pins the current date.  ``progress`` is called with (records done, records).
    """
    from score.execution.processes import fork_server

    db_path = database(db)
    fork_server.start(db_path)  # the query processes' imports overlap with this process's
    from curate.pipeline import CURATION_DIALECT, CurationOptions
    from curate.write.curation import curate_to_files
    from score.execution.executor import Executor

    suite_read = None
    if suite is not None:
        from score.suite.suite_file import read_suite

        suite_read = read_suite(suite)
    count = {"total": 0, "done": 0}

    def on_start(total: int) -> None:
        count["total"] = total

    def one_done(record: object) -> None:
        count["done"] += 1
        if progress is not None:
            progress(count["done"], count["total"])

    executor = Executor(db_path, schema, settings or limits(), sql_dialect=CURATION_DIALECT)
    with executor:
        if suite_read is not None:  # a suite built on another database: refused at once
            from score.suite.suite_file import check_suite_for

            check_suite_for(
                suite_read,
                task_set_sha256=suite_read.task_set_sha256,
                base_fingerprint=executor.fingerprint,
            )
        run = curate_to_files(
            source,
            fmt,
            executor,
            out=Path(out) if out is not None else None,
            report_path=Path(report) if report is not None else None,
            options=CurationOptions(
                rules=rules or ReferenceRules(),
                profile=profile,
                unresolved_semantics=not allow_unresolved_semantics,
                max_per_result=max_per_result,
                smells=smells or SmellRules(),
                advisories=advisories,
                suite_drops=dict(suite_read.drops) if suite_read is not None else {},
                **({} if cache else {"gold_cache": None}),
            ),
            jobs=jobs,
            on_start=on_start,
            progress=one_done,
            against=against,
        )
    return Curation(run.tasks_path, run.report_path, run.report, run.tasks, run.replaced)


def verify_pair(
    gold: str,
    answer: str,
    *,
    gold_dialect: str = "tsql",
    answer_dialect: str = "duckdb",
    db: Database = None,
    schema: str | None = None,
    profile: str = "sqlgold",
    order_matters: bool | None = None,
    rules: ReferenceRules | None = None,
    settings: ExecutorSettings | None = None,
) -> PairCheck:
    """Check one gold and reference answer (SQL texts) as curation checks them, as
    ``sqlgold verify --gold ... --answer ...`` does: both transpiled to DuckDB SQL, run,
    and compared under ``profile``.  The result's ``ok`` is True for the same, non-empty
    result and a gold that meets every reference rule; ``match`` and ``reason`` say how
    the results compare, ``gold.result`` and ``answer.result`` hold them.
    ``order_matters`` None reads it from the gold (an outer ORDER BY)."""
    from score.execution.processes import fork_server

    db_path = database(db)
    fork_server.start(db_path)
    from curate.verify.pair import verify_pair as check_pair
    from score.execution.executor import Executor

    with Executor(db_path, schema, settings or limits(), sql_dialect="duckdb") as executor:
        return check_pair(
            gold,
            answer,
            executor,
            gold_dialect=gold_dialect,
            answer_dialect=answer_dialect,
            profile=profile,
            order_matters=order_matters,
            rules=rules,
        )


def publish_release(
    tasks: str | Path,
    version: str,
    *,
    out: str | Path = "releases",
    db: Database = None,
    schema: str | None = None,
    report: str | Path | None = None,
    test_fraction: float = 0.5,
    seed: int = 0,
    license: str = "apache-2.0",
    pretty_name: str | None = None,
    repo_id: str | None = None,
    homepage: str | None = None,
    suite: str | Path | None = None,
) -> PublishResult:
    """Publish the task file ``tasks`` as the release ``out/<name>/<version>/`` in
    Hugging Face Hub format, as ``sqlgold publish`` does: Parquet configs ``tasks``
    (train and test) and ``database``, a dataset card and a manifest of hashes.  ``db``
    is the DuckDB file the tasks were verified on (its columns and fingerprint are
    released); ``report`` defaults to ``<name>_report.json`` beside ``tasks``.
    Publishing identical content again changes nothing (``created`` False); a version
    already published with other content is an error.  ``datasets.load_dataset`` reads
    the folder."""
    from curate.publish.release import publish
    from curate.publish.versions import check_card_fields, version_key
    from score.cdm.duckdb_file import describe_database
    from score.errors import SqlgoldError
    from score.out_paths import check_output_dir

    version_key(version)  # a version that is not X.Y.Z is refused before anything runs
    check_output_dir(out, stage="publish")
    check_card_fields(  # before the database is read: a bad value costs nothing
        license=license, pretty_name=pretty_name, repo_id=repo_id, homepage=homepage
    )
    db_path = database(db)
    if not isinstance(db_path, Path):
        raise SqlgoldError(
            "a release describes the DuckDB file its tasks were verified on, not a server",
            stage="publish",
        )
    info = describe_database(db_path, schema)
    columns = [
        {"table": t.name, "column": column, "type": dtype, "rows": t.rows}
        for t in info.tables
        for column, dtype in t.columns
    ]
    return publish(
        tasks,
        version,
        out,
        database_columns=columns,
        report_path=report,
        database_fingerprint=info.fingerprint,
        test_fraction=test_fraction,
        seed=seed,
        license=license,
        pretty_name=pretty_name,
        repo_id=repo_id,
        homepage=homepage,
        suite_dir=suite,
    )
