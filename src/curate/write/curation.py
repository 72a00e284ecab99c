"""Curating a source file or folder into a task file and its report (the I/O edge).

``data/benchmark/omop_source.jsonl`` gives the name ``omop``: the tasks go to
``data/benchmark/omop_tasks.jsonl`` and the report to ``omop_report.json`` / ``.md``
beside them, unless told otherwise, with the review page ``omop_report.html``.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from curate.pipeline import CurationOptions, curate_records
from curate.sources.load import load_sources, source_files
from curate.sources.records import SourceRecord
from curate.transpile.rules import RULES
from curate.verify.nocase import nocase_available
from curate.verify.smell_names import RERUN
from curate.write.report import build_report, report_json, report_markdown
from curate.write.task_file import tasks_text, write_files_atomic
from score.errors import InputError, SqlgoldError
from score.execution.executor import Executor
from score.inputs.validated_files import ValidatedFiles
from score.out_paths import check_output_file, prior_file
from score.pages.curation_page import curation_page
from score.versions import installed_versions


def benchmark_name(source: str | Path) -> str:
    """The task set's name from its source path.

    >>> benchmark_name("data/benchmark/omop_source.jsonl"), benchmark_name("queries/")
    ('omop', 'queries')
    """
    stem = Path(source).name.split(".")[0] if Path(source).suffix else Path(source).name
    return stem.removesuffix("_source") or "tasks"


def task_set_name(tasks_path: str | Path) -> str:
    """The task set's name (its release's name) from its task file's: ``omop_tasks.jsonl``
    is ``omop``; so a user who names the task file names the set.

    >>> task_set_name("data/benchmark/omop_tasks.jsonl"), task_set_name("t2o.jsonl")
    ('omop', 't2o')
    """
    return Path(tasks_path).name.split(".")[0].removesuffix("_tasks") or "tasks"


def page_path(report_path: Path) -> Path:
    """The review page beside a JSON report: ``omop_report.json`` -> ``omop_report.html``."""
    return report_path.with_suffix(".html")


def review_page(
    report: dict[str, Any], tasks: list[dict[str, Any]], sources: list[dict[str, Any]]
) -> str:
    """The report's review page (``<name>_report.html``), the fix-up rules explained."""
    return curation_page(report, tasks, sources, {r.name: r.description for r in RULES})


def default_paths(source: str | Path, out: Path | None, report: Path | None) -> tuple[Path, Path]:
    """The task file and JSON report paths (the Markdown report sits beside the JSON).

    By default in the current folder, named for the source:

    >>> [str(p) for p in default_paths("data/benchmark/omop_source.jsonl", None, None)]
    ['omop_tasks.jsonl', 'omop_report.json']
    """
    out = out or Path(f"{benchmark_name(source)}_tasks.jsonl")
    if report is None:
        stem = out.name.removesuffix(".jsonl").removesuffix("_tasks")
        report = out.with_name(f"{stem}_report.json")
    return out, report


def _sources_sha256(source: Path, fmt: str) -> str:
    digest = hashlib.sha256()
    for path, name in source_files(source, fmt):
        digest.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class CurationRun:
    report: dict[str, Any]
    tasks: list[dict[str, Any]]
    tasks_path: Path
    report_path: Path
    replaced: bool = False  # an earlier curation's task file was there, and was replaced


def earlier_outputs(out: Path, report_path: Path) -> bool:
    """Whether an earlier curation's task file is at ``out`` (it is replaced); refuse,
    before any work, a task file or report path that holds something else (the Markdown
    report and the page beside the JSON one are the JSON report's)."""
    replaced = prior_file(out, formats=("sqlgold.task-file/",), what="a task file", stage="curate")
    report_there = prior_file(
        report_path, formats=("sqlgold.curation-report/",), what="a curation report", stage="curate"
    )
    for beside in (report_path.with_suffix(".md"), page_path(report_path)):
        if os.path.lexists(beside) and not report_there:
            raise SqlgoldError(
                f"is there without the curation report {report_path.name} it belongs to: "
                "sqlgold replaces only what it wrote itself (choose another --report)",
                stage="curate",
                path=str(beside),
            )
    return replaced


def curate_to_files(
    source: str | Path,
    fmt: str,
    executor: Executor,
    *,
    out: Path | None = None,
    report_path: Path | None = None,
    options: CurationOptions | None = None,
    jobs: int = 1,
    import_options: dict[str, Any] | None = None,
    on_start: Callable[[int], None] | None = None,
    progress: Callable[[SourceRecord], None] | None = None,
    against: str | Path | None = None,
) -> CurationRun:
    """Import, curate and write the task file and both reports; return what was written.

    The destinations are checked before anything runs; the three files are written
    together or not at all.  A source with no record is an error, and so is a run that
    keeps no task (the reports are written, the task file is not: a task file holds at
    least one task).  With ``against`` (a task file verified elsewhere: another engine or
    copy of the data) the report states which tasks give the same gold result here
    (:mod:`curate.write.engine_agreement`).
    """
    source = Path(source)
    options = options or CurationOptions()
    out, report_path = default_paths(source, out, report_path)
    for path in (out, report_path, report_path.with_suffix(".md"), page_path(report_path)):
        check_output_file(path, stage="curate")
    replaced = earlier_outputs(out, report_path)
    there = None
    if against is not None:
        from score.inputs.task_set import open_task_set

        there = open_task_set(against)  # read before curating: a bad file fails at once
    records, problems = load_sources(source, fmt, **(import_options or {}))
    if not records and not problems:
        raise InputError("the source holds no records", stage="import", path=str(source))
    if on_start:
        on_start(len(records))
    tasks, verdicts = curate_records(records, executor, options, jobs=jobs, progress=progress)
    header = {
        "source": str(source),
        "source_format": fmt,
        "source_sha256": _sources_sha256(source, fmt),
        "tasks_file": str(out),
        "database": {
            "path": executor.db_label,
            "schema": executor.schema,
            "fingerprint": executor.fingerprint,
            **({"engine": executor.engine} if executor.engine != "duckdb" else {}),
        },
        "versions": installed_versions(),
        "comparator_profile": options.profile,
        "settings": {
            "rules": asdict(options.rules),
            "collation_check": options.collation_check and nocase_available(executor),
            "unresolved_semantics": options.unresolved_semantics,
            "max_per_result": options.max_per_result,
            "advisories": options.advisories,
            "smells": [
                s for s in options.smells.enabled() if s not in RERUN or executor.engine == "duckdb"
            ],
            **(
                {"suite_drops": dict(sorted(options.suite_drops.items()))}
                if options.suite_drops
                else {}
            ),
            "today": executor.settings.today.isoformat() if executor.settings.today else None,
            "max_rows": executor.settings.max_rows,
            "timeout_seconds": executor.settings.timeout_seconds,
        },
    }
    report = build_report(
        name=task_set_name(out),
        header=header,
        tasks=tasks,
        verdicts=verdicts,
        problems=problems,
    )
    if there is not None:
        from curate.write.engine_agreement import engine_agreement

        report["engine_agreement"] = engine_agreement(
            tasks,
            there.tasks,
            against=str(against),
            fingerprint_there=there.verified_fingerprint,
        )
    reports = {
        report_path: report_json(report),
        report_path.with_suffix(".md"): report_markdown(report),
        page_path(report_path): review_page(report, tasks, [r.to_dict() for r in records]),
    }
    if not tasks:
        write_files_atomic(reports)
        c = report["counts"]
        raise SqlgoldError(
            f"no task kept of {c['records']} record(s) ({c['dropped']} dropped, "
            f"{len(report['problems'])} unreadable; see {report_path}); {out} was not written",
            stage="curate",
            path=str(source),
        )
    text = tasks_text(tasks, database_fingerprint=executor.fingerprint)
    write_files_atomic({out: text, **reports})
    # every task was validated on its way in: the file's bytes need not be again
    ValidatedFiles().remember(hashlib.sha256(text.encode("utf-8")).hexdigest())
    return CurationRun(report, tasks, out, report_path, replaced)
