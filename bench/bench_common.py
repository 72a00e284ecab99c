"""Shared pieces of the bench: the machine, versions, the raw DuckDB baseline, medians.

The raw baseline ("physical limit") is plain DuckDB, with none of sqlgold in the loop:
one in-memory connection that attaches the same database file READ_ONLY and exposes
every CDM table as ``cdm.<table>`` and ``main.<table>`` views, exactly as
:class:`score.execution.executor.Executor` does, with the executor's default memory limit and
thread count.  Running a query there means ``con.sql(sql).to_arrow_table()``: DuckDB
parses, plans and executes it and the whole result is fetched into an Arrow table (the
form the comparators read).  No guard, no transaction, no timeout timer, no row cap.
"""

from __future__ import annotations

import atexit
import compileall
import gc
import hashlib
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from importlib.metadata import version
from pathlib import Path
from typing import Any

import duckdb

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src"


def _snapshot_src() -> Path:
    """The code this bench measures: a copy of src/ taken when the bench starts (with the
    schemas its score/schemas link names, copied as files).

    Child processes (comparator workers, the memory runs) import sqlgold when they
    start, minutes later; if someone commits meanwhile, the figures would mix code
    versions.  So the parent copies src/ once, puts the copy first on sys.path, and
    passes it to every child in SQLGOLD_BENCH_SRC (a child uses it and copies nothing).
    The copy is byte-compiled, as pip compiles an installed package: without it, a shell
    with ``PYTHONDONTWRITEBYTECODE`` set (this machine's tools set it) had every timed
    process compile sqlgold's source again, 0.1-0.15 s of CPU in each command and its
    fork server that no user pays after the first run.
    """
    given = os.environ.get("SQLGOLD_BENCH_SRC")
    if given:
        return Path(given)
    folder = Path(tempfile.mkdtemp(prefix="sqlgold-bench-src-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    copy = folder / "src"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    compileall.compile_dir(copy, quiet=1)
    os.environ["SQLGOLD_BENCH_SRC"] = str(copy)
    return copy


MEASURED_SRC = _snapshot_src()
sys.path.insert(0, str(MEASURED_SRC))  # before the editable install's src/ on the path


def embedded_db() -> Path:
    """The embedded database's path, in the user cache folder (`sqlgold db path`; `make
    db` builds it there)."""
    from score.cdm.embedded import embedded_path

    return embedded_path()


from score.cdm.duckdb_file import (  # noqa: E402
    attach_read_only,
    cdm_tables_in,
    find_cdm_schema,
    quote,
)
from score.execution.executor import ExecutorSettings  # noqa: E402


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def median(values: Iterable[float]) -> float:
    return float(statistics.median(list(values)))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Wall seconds of one call (garbage collected first, so earlier garbage is not billed)."""
    gc.collect()
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def clocked(
    fn: Callable[[], Any], other_cpu: Callable[[], float] | None = None
) -> tuple[float, float, Any]:
    """Wall seconds and CPU seconds of this whole process (every thread, DuckDB's
    included) of one call, plus the CPU seconds ``other_cpu`` reports for processes
    working for it (an executor's query processes).  CPU time barely moves when other
    processes compete for the cores; wall time does."""
    gc.collect()
    extra = other_cpu() if other_cpu else 0.0
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu + ((other_cpu() - extra) if other_cpu else 0.0), out


def _meminfo_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip()


def src_digest(root: Path = MEASURED_SRC) -> str:
    """sha256 over every Python file under ``root`` (path and bytes): which code was
    measured, committed or not."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    dirty = _git("status", "--porcelain", "--", "src")
    return {
        "cpu": _cpu_model(),
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "memory_gib": _meminfo_total_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "versions": {
            "duckdb": duckdb.__version__,
            "sqlglot": version("sqlglot"),
            "pyarrow": version("pyarrow"),
            "numpy": version("numpy"),
            "sqlgold": version("sqlgold"),
        },
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "src_sha256": src_digest(),
        # others commit concurrently: say whether src/ differed from that commit
        "src_uncommitted_changes": bool(dirty) if dirty is not None else None,
    }


class RawDuckDB:
    """The physical limit: plain DuckDB on the same file, naming the CDM tables as the
    engine does (the file's CDM schema first on the search path, views for the other
    names), so neither side pays for binding a view the other does not."""

    def __init__(self, db_path: str | Path, schema: str | None = None) -> None:
        settings = ExecutorSettings()
        con = duckdb.connect(":memory:")
        con.execute(f"SET memory_limit = '{settings.memory_limit}'")
        if settings.threads:
            con.execute(f"SET threads = {int(settings.threads)}")
        attach_read_only(con, db_path, "omop")
        self.schema = find_cdm_schema(con, "omop", schema)
        tables = cdm_tables_in(con, "omop", self.schema)
        con.execute("CREATE SCHEMA cdm")
        targets = ("main",) if self.schema == "cdm" else ("cdm", "main")
        for name, real in sorted(tables.items()):
            source = f"omop.{quote(self.schema)}.{quote(real)}"
            for target in targets:
                con.execute(f"CREATE VIEW {target}.{quote(name)} AS SELECT * FROM {source}")
        views = "memory.main" if self.schema == "cdm" else "memory.cdm,memory.main"
        path = f"omop.{quote(self.schema)},{views}".replace("'", "''")
        con.execute(f"SET search_path = '{path}'")
        self.con = con

    def run(self, sql: str) -> int:
        """Execute ``sql`` and fetch its whole result as Arrow; the row count."""
        return self.con.sql(sql).to_arrow_table().num_rows

    def clocked(self, sqls: list[str]) -> tuple[float, float, None]:
        """Wall and CPU seconds to run every query once, in order."""

        def go() -> None:
            for sql in sqls:
                self.run(sql)

        return clocked(go)

    def run_all(self, sqls: list[str]) -> float:
        """Seconds to run every query once, in order, on this one connection."""

        def go() -> None:
            for sql in sqls:
                self.run(sql)

        seconds, _ = timed(go)
        return seconds

    def close(self) -> None:
        self.con.close()


def run_child(
    argv: list[str], timeout: float, env: dict[str, str] | None = None
) -> tuple[list[str], bool, str]:
    """Run a child Python process; its stdout lines, whether it was killed, its stderr tail.

    On timeout the child (and only it) is killed by its own id; the lines it already
    printed are kept, so a partial ladder of measurements survives.
    """
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(MEASURED_SRC), str(ROOT / "bench"), full_env.get("PYTHONPATH", "")]
    ).rstrip(os.pathsep)
    if env:
        full_env.update(env)
    proc = subprocess.Popen(
        [sys.executable, *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=full_env,
    )
    killed = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        killed = True
    if proc.returncode not in (0, None) and not killed:
        log(f"child {' '.join(argv[:2])} exited {proc.returncode}: {err.strip()[-2000:]}")
    return out.splitlines(), killed, err.strip()[-2000:]
