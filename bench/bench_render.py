"""Figure 11: render + transpile per record, sqlgold against OHDSI SqlRender, in one run.

For each shared corpus (Achilles' analyses, DataQualityDashboard's check instances, the
OHDSI QueryLibrary pages), each run measures, one after the other:

* **sqlgold**: in this process (imports done and one query transpiled beforehand), a fresh
  :class:`curate.reading.templates.TemplateCache` over :func:`curate.reading.gold.read_gold`
  reads every record once, in file order: SqlRender rendering (defaults, parameters,
  blocks), the script made one query, the transpile to DuckDB with every fix-up rule, or
  the named drop.  Per record: the time of ``cache.read(record)``;
* **SqlRender**: its own jar (``SqlRender.renderSql`` then ``SqlTranslate.translateSql``
  to ``duckdb`` with its replacement patterns), in a new JVM started for the corpus, over
  the same records with the same parameter values; ``bench/SqlRenderTiming.java`` times each
  record inside the JVM (start-up and reading the records excluded).  The first pass over
  the corpus is what one curation costs (the JIT warms up as it goes); a second pass in the
  same JVM is shown too (warm JIT).

Reported per corpus: mean and median milliseconds per record and the ratio of the means
(sqlgold / SqlRender's first pass, the target: at most 1 on every corpus; and over its
second pass), and the same ratio without the corpus's largest record.  The jar
comes from ``--sqlrender-jar`` or ``$SQLRENDER_JAR`` (e.g. a checkout of OHDSI/SqlRender:
``inst/java/SqlRender.jar``), its patterns from
``$SQLRENDER_PATTERNS`` or ``../csv/replacementPatterns.csv`` beside the jar (the same
checkout's ``inst/csv/``); without Java 11+ or the jar the SqlRender side is skipped with
the reason.  Nothing of SqlRender is part of sqlgold.
"""

from __future__ import annotations

import base64
import os
import shutil
import statistics
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench_common import ROOT, log, median

SHARED = ROOT.parent / "shared"
CORPORA = {
    "achilles": (SHARED / "corpora" / "achilles.jsonl", "jsonl"),
    "dqd": (SHARED / "corpora" / "dqd.jsonl", "jsonl"),
    "querylibrary": (SHARED / "querylibrary" / "queries", "querylibrary"),
}
HARNESS = ROOT / "bench" / "SqlRenderTiming.java"


def sqlrender_setup(jar: Path | None) -> tuple[list[str] | None, str | None]:
    """The java command prefix for SqlRender and its patterns, or None and why not."""
    jar = jar or (Path(os.environ["SQLRENDER_JAR"]) if os.environ.get("SQLRENDER_JAR") else None)
    if jar is None:
        return None, "no SqlRender jar (--sqlrender-jar or $SQLRENDER_JAR)"
    if not jar.is_file():
        return None, f"SqlRender jar not found at {jar}"
    java = shutil.which("java")
    if java is None:
        return None, "no java on PATH"
    patterns = Path(
        os.environ.get("SQLRENDER_PATTERNS")
        or jar.parent.parent / "csv" / "replacementPatterns.csv"
    )
    if not patterns.is_file():
        return None, f"SqlRender's replacementPatterns.csv not found at {patterns}"
    try:
        version = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"java does not start: {e}"
    return [java, "-cp", str(jar), str(HARNESS), str(patterns)], version.stderr.splitlines()[0]


def _records(path: Path, fmt: str):
    from curate.sources.load import load_sources

    records, _ = load_sources(path, fmt)
    return [r for r in records if r.gold_sql is not None]


def _b64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def _sqlrender_input(records, folder: Path) -> Path:
    from curate.ohdsi.render import as_text

    path = folder / "records.tsv"
    with path.open("w", encoding="utf-8") as f:
        for r in records:
            parts = [_b64(r.gold_sql)]
            for name, value in (r.parameters or {}).items():
                parts += [_b64(name), _b64(as_text(value))]
            f.write("\t".join(parts) + "\n")
    return path


def _sqlrender_pass(command: list[str], records_tsv: Path, folder: Path) -> dict[int, list]:
    out = folder / "sqlrender_times.tsv"
    subprocess.run(
        [*command, str(records_tsv), str(out), "2"],
        check=True,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    passes: dict[int, list] = defaultdict(list)
    for line in out.read_text(encoding="utf-8").splitlines():
        p, _, nanos, error = line.split("\t")
        passes[int(p)].append((int(nanos) / 1e6, error))
    return passes


def _sqlgold_pass(records) -> tuple[list[float], dict[str, int]]:
    from curate.reading.gold import read_gold
    from curate.reading.templates import TemplateCache

    cache = TemplateCache(read_gold)
    times = []
    for record in records:
        start = time.perf_counter()
        cache.read(record)
        times.append((time.perf_counter() - start) * 1000)
    return times, cache.stats()


def _without_largest(records, sqlgold_ms: list[float], sqlrender_ms: list[float]) -> dict:
    """The corpus's largest record (the longest gold text: the same record in every run) and
    the ratio of the means without it (one large record can make a third of a corpus's
    mean: Achilles' analysis 2004)."""
    if len(records) < 2:
        return {}
    big = max(range(len(records)), key=lambda i: len(records[i].gold_sql))
    rest_sqlgold = sum(sqlgold_ms) - sqlgold_ms[big]
    rest_sqlrender = sum(sqlrender_ms) - sqlrender_ms[big]
    return {
        "largest": {
            "id": records[big].id,
            "sqlgold_ms": sqlgold_ms[big],
            "sqlrender_ms": sqlrender_ms[big],
        },
        "ratio_without_largest": rest_sqlgold / rest_sqlrender if rest_sqlrender else None,
    }


def _summary(ms: list[float]) -> dict[str, float]:
    return {
        "mean_ms": statistics.fmean(ms),
        "median_ms": statistics.median(ms),
        "total_s": sum(ms) / 1000,
    }


def sqlglot_build() -> str:
    """Which sqlglot runs the sqlgold side: ``compiled`` (sqlglotc's mypyc build) or ``pure``."""
    import sqlglot.parser

    return "pure" if sqlglot.parser.__file__.endswith(".py") else "compiled"


def render_speed(runs: int, work: Path, jar: Path | None = None) -> dict[str, Any]:
    """Figure 11, for every corpus present."""
    from curate.reading.gold import to_duckdb

    to_duckdb("SELECT 1", "tsql", "gold_sql")  # imports and first-use set-up
    command, java = sqlrender_setup(jar)
    out: dict[str, Any] = {
        "runs": runs,
        "sqlglot_build": sqlglot_build(),
        "java": java if command else None,
        "sqlrender_note": None if command else java,
        "corpora": {},
    }
    log(f"render: sqlglot {out['sqlglot_build']}")
    if command is None:
        log(f"render: SqlRender skipped: {java}")
    for name, (path, fmt) in CORPORA.items():
        if not path.exists():
            out["corpora"][name] = {"note": f"{path} not found: skipped"}
            continue
        records = _records(path, fmt)
        folder = work / f"render-{name}"
        folder.mkdir(parents=True, exist_ok=True)
        tsv = _sqlrender_input(records, folder) if command else None
        rows = []
        for i in range(runs):
            row: dict[str, Any] = {}
            if command:
                passes = _sqlrender_pass(command, tsv, folder)
                row["sqlrender_first"] = _summary([ms for ms, _ in passes[0]])
                row["sqlrender_warm"] = _summary([ms for ms, _ in passes[1]])
                row["sqlrender_errors"] = sum(1 for _, e in passes[0] if e)
            times, stats = _sqlgold_pass(records)
            row["sqlgold"] = _summary(times)
            row["template_cache"] = stats
            if command:
                row["ratio_first"] = row["sqlgold"]["mean_ms"] / row["sqlrender_first"]["mean_ms"]
                row["ratio_warm"] = row["sqlgold"]["mean_ms"] / row["sqlrender_warm"]["mean_ms"]
                row.update(_without_largest(records, times, [ms for ms, _ in passes[0]]))
            rows.append(row)
            log(
                f"  render {name} run {i + 1}: sqlgold {row['sqlgold']['mean_ms']:.2f} ms/record"
                + (
                    f", SqlRender {row['sqlrender_first']['mean_ms']:.2f} (warm "
                    f"{row['sqlrender_warm']['mean_ms']:.2f}), x{row['ratio_first']:.2f}"
                    if command
                    else ""
                )
            )
        entry: dict[str, Any] = {
            "records": len(records),
            "per_run": rows,
            "template_cache": rows[-1]["template_cache"],
        }
        for side in ("sqlgold", "sqlrender_first", "sqlrender_warm"):
            if side in rows[0]:
                entry[side] = {k: median(r[side][k] for r in rows) for k in rows[0][side]}
        for ratio in ("ratio_first", "ratio_warm"):
            if ratio in rows[0]:
                entry[ratio] = median(r[ratio] for r in rows)
        if command:
            entry["sqlrender_errors"] = rows[0]["sqlrender_errors"]
        if "largest" in rows[0]:
            entry["ratio_without_largest"] = median(r["ratio_without_largest"] for r in rows)
            entry["largest"] = {
                "id": rows[-1]["largest"]["id"],
                **{
                    k: median(r["largest"][k] for r in rows) for k in ("sqlgold_ms", "sqlrender_ms")
                },
            }
        out["corpora"][name] = entry
    ratios = [c["ratio_first"] for c in out["corpora"].values() if "ratio_first" in c]
    out["worst_ratio"] = max(ratios) if ratios else None
    return out
