"""TEXT-TO-OMOP's own evaluator against ``sqlgold score run --profile text2omop``, on one
PostgreSQL server, file by file: every metric both report, their difference, both wall times.

    .venv/bin/python bench/text2omop_differential.py PEER [--today pinned|live|both]

``PEER`` is a snapshot of red1dwarf/TEXT-TO-OMOP: a checkout, or the git directory the
search tool's ``fetch`` brings (its files are read with ``git archive`` into a temporary
folder; nothing of it is copied into this project).  The evaluator
(``EVALUATION/evaluation_protocol.py``) runs from there, in a virtual environment of its
own with the one package it imports (``psycopg2-binary``, as its README's setup installs),
with its defaults and ``--pg_schema cdm``, connected as the server's superuser.

What happens, in order:

1. a throwaway PostgreSQL server is started as the tests start theirs
   (:mod:`tests.pg_server`), and the embedded CDM is loaded into it (``sqlgold db load``);
2. the snapshot's test file (``DATA/test.jsonl``) is curated on that server as a
   maintainer who wants every line scored would: ``--format text2omop --min-rows 0``
   and every ``--allow-*`` flag, with ``--allow-current-date`` (today is the day it runs,
   as the evaluator's) or with ``--today`` pinned to the day it runs;
3. each of the five published result files (``INFERENCE/*/results_*.jsonl``) is scored
   by the evaluator and by ``sqlgold score run --profile text2omop --timeout 5`` (the
   evaluator's 5 s), each as a whole process, one after the other; sqlgold with a user
   cache folder of the mode's own (``XDG_CACHE_HOME``), as a user has it: curation left
   the kept golds' results there, and the first file's run the priors' summaries;
4. before anything is timed, sqlgold's source and the snapshot's are byte-compiled, as
   an installed package is (a shell with ``PYTHONDONTWRITEBYTECODE`` set would otherwise
   have each timed process compile them again);
5. the evaluator's metrics are read from the ``evaluation_per_fold.csv`` it writes (full
   precision; its printout has four decimals), sqlgold's from ``summary.json``.

Writes ``bench/text2omop_differential.json`` and ``.md`` (``--out``): per file and mode, each
metric's two values and their difference, the wall times and their ratio.  A difference
over 1e-9 is printed and makes the exit code 3.
"""

from __future__ import annotations

import argparse
import compileall
import csv
import datetime as dt
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
SQLGOLD = str(VENV_BIN / "sqlgold")

#: The evaluator's metric names (its CSV's columns) and sqlgold's (summary.json "text2omop").
METRICS = {
    "execution_accuracy": "execution_accuracy",
    "prec_exe": "prec_exe",
    "rec_exe": "rec_exe",
    "f1_exe": "f1_exe",
    "prec_ans": "prec_ans",
    "rec_ans": "rec_ans",
    "f1_ans": "f1_ans",
    "em": "em",
    "emn": "emn",
    "rouge_l": "rouge_l",
    "RS_0": "RS_0",
    "RS_1": "RS_1",
    "RS_10": "RS_10",
    "RS_N": "RS_N",
    "gold_exec_errors": "gold_exec_errors",
    "pred_exec_errors": "pred_exec_errors",
    "n_examples": "n_examples",
}
TOLERANCE = 1e-9


def log(message: str) -> None:
    print(f"[differential] {message}", file=sys.stderr, flush=True)


def peer_files(peer: Path, into: Path) -> Path:
    """The snapshot's files in a folder: ``peer`` itself when it is a checkout, else the
    evaluator, the test file and the result files of its HEAD, read with ``git show`` (a
    fetched snapshot may lack its largest files, which none of these is)."""
    if (peer / "EVALUATION" / "evaluation_protocol.py").is_file():
        return peer
    listing = subprocess.run(
        ["git", f"--git-dir={peer}", "ls-tree", "-r", "--name-only", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    wanted = [
        name
        for name in listing
        if name in ("EVALUATION/evaluation_protocol.py", "DATA/test.jsonl")
        or (name.startswith("INFERENCE/") and Path(name).name.startswith("results_"))
    ]
    for name in wanted:
        blob = subprocess.run(
            ["git", f"--git-dir={peer}", "show", f"HEAD:{name}"], capture_output=True, check=True
        ).stdout
        (into / name).parent.mkdir(parents=True, exist_ok=True)
        (into / name).write_bytes(blob)
    return into


def peer_commit(peer: Path) -> str | None:
    git_dir = peer if not (peer / ".git").exists() else peer / ".git"
    done = subprocess.run(
        ["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True, text=True
    )
    return done.stdout.strip() or None


def peer_venv(folder: Path) -> Path:
    """A virtual environment with what the evaluator imports: psycopg2 (its README's
    ``psycopg2-binary``)."""
    subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
    python = folder / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "psycopg2-binary"],
        check=True,
    )
    return python


def timed_run(
    cmd: list[str], cwd: Path, env: dict | None = None
) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    return time.perf_counter() - start, done


def run_peer(python: Path, evaluator: Path, result_file: Path, admin_url: str, work: Path):
    work.mkdir(parents=True, exist_ok=True)
    seconds, done = timed_run(
        [
            str(python),
            str(evaluator),
            "--results_jsonl",
            str(result_file),
            "--pg_conn_str",
            admin_url,
            "--pg_schema",
            "cdm",
        ],
        work,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the evaluator failed on {result_file.name}:\n{done.stderr[-3000:]}")
    with open(work / "evaluation_per_fold.csv", newline="", encoding="utf-8") as f:
        (row,) = list(csv.DictReader(f))
    values: dict[str, float] = {}
    for key, text in row.items():
        if key in ("file", "model"):
            continue
        values[key] = float(text)
    rs_n = [k for k in values if k.startswith("RS_") and k not in ("RS_0", "RS_1", "RS_10")]
    if rs_n:
        values["RS_N"] = values.pop(rs_n[0])
    return seconds, values


def sqlgold_values(summary: dict) -> dict[str, float]:
    t = summary["text2omop"]
    values = {k: float(v) for k, v in t.items() if isinstance(v, int | float)}
    for c, v in t["rs"].items():
        values[f"RS_{c}"] = float(v)
    return values


def run_sqlgold(
    tasks: Path, result_file: Path, reader_url: str, out: Path, today: str | None, env: dict
):
    cmd = [
        SQLGOLD,
        "score",
        "run",
        str(tasks),
        str(result_file),
        "--out",
        str(out),
        "--profile",
        "text2omop",
        "--db",
        reader_url,
        "--timeout",
        "5",
        "-q",
    ]
    if today:
        cmd += ["--today", today]
    seconds, done = timed_run(cmd, out.parent, env)
    if done.returncode not in (0, 3):
        raise RuntimeError(f"sqlgold score run failed on {result_file.name}:\n{done.stderr}")
    summary = json.loads((out / "summary.json").read_text())
    return seconds, sqlgold_values(summary), done.returncode


def curate(test_file: Path, reader_url: str, out: Path, today: str | None, env: dict) -> dict:
    cmd = [
        SQLGOLD,
        "curate",
        str(test_file),
        "--format",
        "text2omop",
        "--db",
        reader_url,
        "--out",
        str(out),
        "--min-rows",
        "0",
        "--max-gold-rows",
        "10000",
        "--allow-all-zero",
        "--allow-ties",
        "--allow-window-ties",
        "--allow-unordered-limit",
        "--allow-unresolved-semantics",
        "--no-determinism-check",
        "--jobs",
        "2",
        "-q",
    ]
    cmd += ["--today", today] if today else ["--allow-current-date"]
    seconds, done = timed_run(cmd, out.parent, env)
    if done.returncode != 0:
        raise RuntimeError(f"curation failed:\n{done.stderr}")
    report = json.loads(out.with_name(out.stem.replace("_tasks", "") + "_report.json").read_text())
    return {"seconds": seconds, "report": report}


def start_postgres():
    sys.path.insert(0, str(ROOT))
    from tests.pg_server import start_server

    return start_server()


def load_cdm(admin_url: str, db: Path) -> str:
    done = subprocess.run(
        [SQLGOLD, "db", "load", admin_url, "--from", str(db), "-q"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"sqlgold db load failed:\n{done.stderr}")
    for line in done.stdout.splitlines() + done.stderr.splitlines():
        for word in line.split():
            if word.startswith("postgresql://sqlgold_reader"):
                return word
    raise RuntimeError(f"sqlgold db load printed no reader URL:\n{done.stdout}")


def compare(peer: dict[str, float], ours: dict[str, float]) -> list[dict]:
    rows = []
    for name in METRICS:
        p = peer.get(name)
        s = ours.get(name)
        diff = None if p is None or s is None else s - p
        rows.append({"metric": name, "peer": p, "sqlgold": s, "difference": diff})
    return rows


def markdown(result: dict) -> str:
    shown = ["execution_accuracy", "f1_exe", "f1_ans", "em", "emn", "rouge_l", "RS_0", "RS_10"]
    lines = [
        "# TEXT-TO-OMOP: its evaluator against sqlgold on PostgreSQL",
        "",
        f"Measured {result['measured']} on {result['machine']}; TEXT-TO-OMOP at "
        f"`{result['peer_commit']}`; PostgreSQL {result['server_version']}. Command:",
        "",
        f"    {result['command']}",
        "",
        "Each metric as the evaluator prints it (its CSV's full precision); **max |diff|** is",
        f"the largest difference of sqlgold's value from it over all {len(METRICS)} metrics "
        "it reports (counts included); the JSON beside this file has every value.",
        "",
    ]
    for mode in result["modes"]:
        cur = mode["curation"]
        lines += [
            f"## today: {mode['today']}",
            "",
            f"Curation on the server: {cur['kept']} of {cur['records']} records kept, "
            f"{cur['seconds']:.1f} s.",
            "",
            "| file | " + " | ".join(shown) + " | max \\|diff\\| | peer s | sqlgold s | ratio |",
            "| --- | " + " | ".join("---:" for _ in shown) + " | ---: | ---: | ---: | ---: |",
        ]
        for f in mode["files"]:
            peer = {r["metric"]: r["peer"] for r in f["metrics"]}
            worst = max(
                (abs(r["difference"]) for r in f["metrics"] if r["difference"] is not None),
                default=None,
            )
            missing = any(r["difference"] is None for r in f["metrics"])
            cells = " | ".join(_num(peer.get(m)) for m in shown)
            lines.append(
                f"| {f['file'].removeprefix('results_').removesuffix('.jsonl')} | {cells} | "
                f"{'missing' if missing else _num(worst)} | {f['peer_seconds']:.2f} | "
                f"{f['sqlgold_seconds']:.2f} | {f['ratio']:.2f} |"
            )
        lines.append("")
    return "\n".join(lines)


def _num(v) -> str:
    if v is None:
        return "–"
    if float(v).is_integer():
        return str(int(v))
    return f"{v:.4g}" if abs(v) < 1e-3 else f"{v:.4f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", type=Path, help="a snapshot of red1dwarf/TEXT-TO-OMOP")
    parser.add_argument("--db", type=Path, help="the CDM (default: the embedded database)")
    parser.add_argument("--today", choices=["live", "pinned", "both"], default="both")
    parser.add_argument("--files", nargs="*", help="only these result files (by name)")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "text2omop_differential.json")
    parser.add_argument("--keep", type=Path, help="keep the work folder here")
    parser.add_argument(
        "--pg-url",
        help="an administrator's URL of a running server to use (the CDM is loaded into it); "
        "default: a throwaway server started as the tests start theirs",
    )
    args = parser.parse_args()
    if args.db is None:
        from score.cdm.embedded import ensure_embedded

        args.db = ensure_embedded()

    work = Path(tempfile.mkdtemp(prefix="sqlgold-differential-"))
    server = None
    try:
        files = peer_files(args.peer.resolve(), work / "peer")
        evaluator = files / "EVALUATION" / "evaluation_protocol.py"
        results = sorted((files / "INFERENCE").glob("*/results_*.jsonl"))
        if args.files:
            results = [r for r in results if r.name in args.files]
        log(f"peer venv in {work / 'peer-venv'}")
        python = peer_venv(work / "peer-venv")
        for code in (ROOT / "src", files):  # as installed: neither compiles while timed
            compileall.compile_dir(code, quiet=1)
        if args.pg_url:
            admin = args.pg_url
        else:
            log("starting PostgreSQL")
            server = start_postgres()
            admin = server.url()
        reader = load_cdm(admin, args.db)
        import psycopg

        with psycopg.connect(admin) as c:
            (server_version,) = c.execute("SHOW server_version").fetchone()
        modes = []
        today = dt.date.today().isoformat()
        for mode in ("live", "pinned") if args.today == "both" else (args.today,):
            pinned = today if mode == "pinned" else None
            folder = work / mode
            folder.mkdir()
            # a user cache folder of this mode's own: curation leaves its golds' results
            # there, as it does for a user, and the first scoring its priors' summaries
            env = {**os.environ, "XDG_CACHE_HOME": str(folder / "user-cache")}
            log(f"curating {files / 'DATA' / 'test.jsonl'} ({mode})")
            cur = curate(
                files / "DATA" / "test.jsonl", reader, folder / "t2o_tasks.jsonl", pinned, env
            )
            rep = cur["report"]
            entry = {
                "today": "the day it runs (--allow-current-date)"
                if mode == "live"
                else f"--today {today}",
                "curation": {
                    "seconds": cur["seconds"],
                    "records": rep["counts"]["records"],
                    "kept": rep["counts"]["kept"],
                },
                "files": [],
            }
            for result_file in results:
                log(f"{mode}: {result_file.name}: the evaluator")
                peer_s, peer_values = run_peer(
                    python, evaluator, result_file, admin, folder / ("peer-" + result_file.stem)
                )
                log(f"{mode}: {result_file.name}: sqlgold")
                ours_s, ours_values, code = run_sqlgold(
                    folder / "t2o_tasks.jsonl",
                    result_file,
                    reader,
                    folder / ("sqlgold-" + result_file.stem),
                    pinned,
                    env,
                )
                rows = compare(peer_values, ours_values)
                for row in rows:
                    d = row["difference"]
                    if d is None or abs(d) > TOLERANCE:
                        log(f"  {row['metric']}: peer {row['peer']} sqlgold {row['sqlgold']}")
                entry["files"].append(
                    {
                        "file": result_file.name,
                        "metrics": rows,
                        "peer_seconds": peer_s,
                        "sqlgold_seconds": ours_s,
                        "ratio": ours_s / peer_s,
                        "sqlgold_exit_code": code,
                    }
                )
                log(f"  wall: peer {peer_s:.2f} s, sqlgold {ours_s:.2f} s")
            modes.append(entry)
        result = {
            "measured": dt.datetime.now().isoformat(timespec="seconds"),
            "machine": f"{platform.machine()}, {os.cpu_count()} cores",
            "peer_commit": peer_commit(args.peer.resolve()),
            "server_version": server_version,
            "command": "python bench/text2omop_differential.py PEER --today " + args.today,
            "modes": modes,
        }
        args.out.write_text(json.dumps(result, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(markdown(result))
        bad = [
            (m["today"], f["file"], r["metric"])
            for m in modes
            for f in m["files"]
            for r in f["metrics"]
            if r["difference"] is None or abs(r["difference"]) > TOLERANCE
        ]
        print(args.out.with_suffix(".md").read_text())
        for where in bad:
            log(f"differs: {where}")
        return 3 if bad else 0
    finally:
        if server is not None:
            server.stop()
        if args.keep:
            shutil.copytree(work, args.keep, dirs_exist_ok=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
