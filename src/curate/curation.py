"""Curating a source file or folder into a task file and its report (the I/O edge).

``data/benchmark/omop_source.jsonl`` gives the name ``omop``: the tasks go to
``data/benchmark/omop_tasks.jsonl`` and the report to ``omop_report.json`` / ``.md``
beside them, unless told otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb
import sqlglot

from curate.curation_report import build_report, report_json, report_markdown
from curate.pipeline import CurationOptions, curate_records
from curate.sources.load import load_sources, source_files
from curate.sources.records import SourceRecord
from curate.task_file import write_tasks, write_text_atomic
from score.executor import Executor


def benchmark_name(source: str | Path) -> str:
    """The task set's name from its source path.

    >>> benchmark_name("data/benchmark/omop_source.jsonl"), benchmark_name("queries/")
    ('omop', 'queries')
    """
    stem = Path(source).name.split(".")[0] if Path(source).suffix else Path(source).name
    return stem.removesuffix("_source") or "tasks"


def default_paths(source: str | Path, out: Path | None, report: Path | None) -> tuple[Path, Path]:
    """The task file and JSON report paths (the Markdown report sits beside the JSON).

    >>> [str(p) for p in default_paths("data/benchmark/omop_source.jsonl", None, None)]
    ['data/benchmark/omop_tasks.jsonl', 'data/benchmark/omop_report.json']
    """
    out = out or Path("data/benchmark") / f"{benchmark_name(source)}_tasks.jsonl"
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
) -> CurationRun:
    """Import, curate and write the task file and both reports; return what was written."""
    source = Path(source)
    options = options or CurationOptions()
    out, report_path = default_paths(source, out, report_path)
    records, problems = load_sources(source, fmt, **(import_options or {}))
    if on_start:
        on_start(len(records))
    tasks, verdicts = curate_records(records, executor, options, jobs=jobs, progress=progress)
    header = {
        "source": str(source),
        "source_format": fmt,
        "source_sha256": _sources_sha256(source, fmt),
        "tasks_file": str(out),
        "database": {
            "path": executor.db_path,
            "schema": executor.schema,
            "fingerprint": executor.fingerprint,
        },
        "versions": {
            "sqlgold": version("sqlgold"),
            "sqlglot": sqlglot.__version__,
            "duckdb": duckdb.__version__,
        },
        "comparator_profile": options.profile,
        "settings": {
            "rules": asdict(options.rules),
            "today": executor.settings.today.isoformat() if executor.settings.today else None,
            "max_rows": executor.settings.max_rows,
            "timeout_seconds": executor.settings.timeout_seconds,
        },
    }
    report = build_report(
        name=benchmark_name(source),
        header=header,
        tasks=tasks,
        verdicts=verdicts,
        problems=problems,
    )
    write_tasks(out, tasks)
    write_text_atomic(report_path, report_json(report))
    write_text_atomic(report_path.with_suffix(".md"), report_markdown(report))
    return CurationRun(report, tasks, out, report_path)
