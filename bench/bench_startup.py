"""Figure 6: how fast the editing loop starts (``sqlgold --help``, ``sqlgold verify``).

Each command runs in a fresh process, as a user types it, on the code copy this bench
measures (``bench_common.MEASURED_SRC`` first on the path); wall and CPU time are the
medians over the runs.  Three commands:

- ``sqlgold --help``;
- ``sqlgold verify`` of a trivial pair (``SELECT COUNT(*) FROM cdm.person`` against
  itself) on the embedded database: start-up, the database opened, both queries
  transpiled, run and compared, the report printed;
- ``sqlgold verify --id`` of the last record of a source file of 5,000 records (the
  project's source records repeated under new ids), so finding the record is measured
  too.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench_common import MEASURED_SRC, log

TRIVIAL = "SELECT COUNT(*) AS n FROM cdm.person"
#: What the installed ``sqlgold`` script runs (``curate.cli:run``), from the measured copy.
LAUNCH = "import sys; from curate.cli import run; sys.argv[0] = 'sqlgold'; run()"


def _timed(args: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, *args], env=env, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.returncode


def _big_source(source: Path, folder: Path, records: int = 5000) -> tuple[Path, str]:
    lines = [json.loads(x) for x in source.read_text(encoding="utf-8").splitlines() if x]
    out = []
    for i in range(records):
        rec = dict(lines[i % len(lines)])
        rec["id"] = f"{rec['id']}-copy{i:05d}"
        out.append(json.dumps(rec, ensure_ascii=False))
    path = folder / "big_source.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path, json.loads(out[-1])["id"]


def startup_cost(db: Path, source: Path, runs: int, folder: Path) -> dict[str, Any]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(MEASURED_SRC), os.environ.get("PYTHONPATH", "")]).rstrip(
            os.pathsep
        ),
    }
    big, last_id = _big_source(source, folder)
    commands = {
        "help": ["--help"],
        "verify": [
            "verify",
            "--db",
            str(db),
            "--gold",
            TRIVIAL,
            "--answer",
            TRIVIAL,
            "--gold-dialect",
            "duckdb",
        ],
        "verify_id": ["verify", "--db", str(db), "--id", last_id, "--source", str(big)],
    }
    out: dict[str, Any] = {"runs": runs, "source_records": 5000}
    for name, args in commands.items():
        _timed(args, env)  # warm the file cache; not counted
        walls, cpus, codes = [], [], set()
        for _ in range(runs):
            wall, cpu, code = _timed(args, env)
            walls.append(wall)
            cpus.append(cpu)
            codes.add(code)
        out[name] = {
            "wall_s": statistics.median(walls),
            "cpu_s": statistics.median(cpus),
            "exit_codes": sorted(codes),
        }
        log(f"startup {name}: {out[name]['wall_s']:.3f} s wall, {out[name]['cpu_s']:.3f} s CPU")
    return out
