"""`sqlgold score` as a new user runs it: languages scored and left unanswered, runs of the
same task set compared whatever file held it, no empty folder left by a failed command,
both runs named in a comparison, and Ctrl-C as one line (then --resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from click.testing import CliRunner

from curate.cli import main
from score.cli.exit_codes import ERROR
from tests.paths import REPO

TASKS = REPO / "data" / "benchmark" / "omop_tasks.jsonl"


def _tasks() -> list[dict]:
    return [json.loads(line) for line in TASKS.read_text(encoding="utf-8").splitlines()[1:]]


def _english_answers(path: Path) -> Path:
    """The reference answer of every English question, and nothing in Korean."""
    with path.open("w", encoding="utf-8") as f:
        for task in _tasks():
            answer = task["answer_sql"] or task["gold_sql"]
            output = f"```sql\n{answer}\n```" if task["answerable"] else "ABSTAIN"
            f.write(json.dumps({"task_id": task["id"], "language": "en", "output": output}) + "\n")
    return path


def score(omop_db, *args) -> object:
    return CliRunner().invoke(main, ["score", "run", *map(str, args), "--db", str(omop_db), "-q"])


def test_a_language_left_unanswered_is_said_and_a_chosen_subset_is_stated(omop_db, tmp_path):
    """The issue: the gold SQL for all English questions scored EX 0.612 and RS(10) -329,
    no warning: the Korean instances counted as missing."""
    preds = _english_answers(tmp_path / "en.jsonl")
    every = score(omop_db, TASKS, preds, "--out", tmp_path / "all", "--no-cache")
    assert every.exit_code == 0, every.output
    assert "no prediction answers any ko question" in every.output  # stderr, mixed in
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert summary["languages"]["unanswered"] == {"ko": summary["by_language"]["ko"]["n"]}
    assert any("ko question" in w for w in summary["warnings"])
    english = score(omop_db, TASKS, preds, "--out", tmp_path / "en", "--language", "en")
    assert english.exit_code == 0, english.output
    assert "languages    en of en, ko (chosen with --language)" in english.output
    summary = json.loads((tmp_path / "en" / "summary.json").read_text())
    assert summary["ex"] == 1.0 and summary["languages"]["chosen"] is True
    assert summary["languages"]["unanswered"] == {} and "warnings" in summary
    written_by_run = (tmp_path / "en" / "report.html").read_bytes()
    report = CliRunner().invoke(main, ["score", "report", str(tmp_path / "en")])
    assert report.exit_code == 0, report.output
    assert (tmp_path / "en" / "report.html").read_bytes() == written_by_run  # same bytes
    assert "Languages scored (" in (tmp_path / "en" / "report.md").read_text()
    page = (tmp_path / "en" / "report.html").read_text()  # score run's, rewritten by report
    first = json.loads((tmp_path / "en" / "results.jsonl").read_text().splitlines()[0])
    assert f'"id":"{first["task_id"]}"' in page and "no gold SQL" not in page  # tasks read
    unknown = score(omop_db, TASKS, preds, "--out", tmp_path / "fr", "--language", "fr")
    assert unknown.exit_code == ERROR and "asks its questions in en, ko" in unknown.output
    assert not (tmp_path / "fr").exists()


def test_runs_of_the_same_task_set_compare_whatever_file_held_it(omop_db, tmp_path):
    """The issue: a run on a release folder and one on the task file with the same set hash
    were refused ("the runs differ in task set"), and the report labelled a file's hash the
    task set."""
    release = CliRunner().invoke(
        main,
        ["publish", str(TASKS), "--version", "0.1.0", "--db", str(omop_db),
         "--out", str(tmp_path / "releases")],
    )  # fmt: skip
    assert release.exit_code == 0, release.output
    folder = tmp_path / "releases" / "omop" / "0.1.0"
    preds = _english_answers(tmp_path / "en.jsonl")
    for out, tasks in (("a", TASKS), ("b", folder)):
        done = score(omop_db, tasks, preds, "--out", tmp_path / out, "--language", "en")
        assert done.exit_code == 0, done.output
    compared = CliRunner().invoke(
        main, ["score", "compare", str(tmp_path / "a"), str(tmp_path / "b"),
               "--out", str(tmp_path / "ab")],
    )  # fmt: skip
    assert compared.exit_code == 0, compared.output
    assert f"A            {tmp_path / 'a'}" in compared.output  # which run is A, which B
    assert f"B            {tmp_path / 'b'}" in compared.output
    report = (tmp_path / "ab" / "report.md").read_text()
    assert "- Task set: set sha256 " in report
    assert "Discordant instances" in (tmp_path / "ab" / "report.html").read_text()


def test_a_failed_command_leaves_no_empty_folder(omop_db, tmp_path):
    """The issue: score run with a bad predictions file, a refused compare and a refused
    report --out each left an empty output folder."""
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    failed = score(omop_db, TASKS, bad, "--out", tmp_path / "runs" / "x")
    assert failed.exit_code == ERROR
    assert not (tmp_path / "runs").exists()
    preds = _english_answers(tmp_path / "en.jsonl")
    assert score(omop_db, TASKS, preds, "--out", tmp_path / "en", "--language", "en").exit_code == 0
    other = score(omop_db, TASKS, preds, "--out", tmp_path / "all", "--split", "all")
    assert other.exit_code == 0
    refused = CliRunner().invoke(
        main, ["score", "compare", str(tmp_path / "en"), str(tmp_path / "all"),
               "--out", str(tmp_path / "cmp" / "out")],
    )  # fmt: skip
    assert refused.exit_code == ERROR and "differ in split" in refused.output
    assert not (tmp_path / "cmp").exists()
    report = CliRunner().invoke(
        main, ["score", "report", str(tmp_path / "en"), str(tmp_path / "all"),
               "--out", str(tmp_path / "rep")],
    )  # fmt: skip
    assert report.exit_code == ERROR and not (tmp_path / "rep").exists()


def test_ctrl_c_stops_a_scoring_with_one_line_and_resume_finishes_it(omop_db, tmp_path):
    """The issue: Ctrl-C printed click's "Aborted!"; it is one documented line, the
    queries under way stop at once, and --resume then finishes the run."""
    preds = tmp_path / "slow.jsonl"
    slow = "```sql\nSELECT count(*) AS n FROM range(4000000000)\n```"
    with preds.open("w") as f:
        for task in _tasks()[:4]:
            f.write(json.dumps({"task_id": task["id"], "language": "en", "output": slow}) + "\n")
    out = tmp_path / "run"
    args = [sys.executable, "-m", "curate.cli", "score", "run", str(TASKS), str(preds),
            "--out", str(out), "--split", "all", "--timeout", "60",
            "--db", str(omop_db)]  # fmt: skip
    process = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # a test run started in the background has SIGINT ignored: restore what a
        # terminal gives a command
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.stat().st_size):
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == ERROR
    last = err.replace("\r", "\n").strip().splitlines()[-1]
    assert last.startswith("error: [score] stopped by Ctrl-C;"), err
    assert "Aborted!" not in err and "Traceback" not in err
    finished = len(results.read_text().splitlines())
    assert 0 < finished < 451
    resumed = subprocess.run([*args, "--resume", "-q"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    assert len(results.read_text().splitlines()) == 451


def test_quiet_means_quiet_sqlglot_says_nothing_from_the_query_processes(omop_db, tmp_path):
    """The issue: sqlglot's "contains unsupported syntax. Falling back to parsing as a
    'Command'" reached stderr under -q, printed raw by each query process that parsed such
    a prediction.  The verdict (refused) is in results.jsonl; stderr stays silent, also
    without -q (only the run's own lines and progress there)."""
    preds = tmp_path / "commands.jsonl"
    outputs = ["CALL pragma_version()", "SELECT 1; LOAD httpfs", "EXPLAIN SELECT 1"]
    with preds.open("w") as f:
        for task, sql in zip(_tasks(), outputs, strict=False):
            output = f"```sql\n{sql}\n```"
            f.write(json.dumps({"task_id": task["id"], "language": "en", "output": output}) + "\n")
    for flags in (["-q"], ["--dialect", "tsql"]):
        out = tmp_path / ("run" + "".join(flags))
        args = [sys.executable, "-m", "curate.cli", "score", "run", str(TASKS), str(preds),
                "--out", str(out), "--split", "all", "--language", "en", "--no-cache",
                "--db", str(omop_db), *flags]  # fmt: skip
        done = subprocess.run(args, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "Falling back" not in done.stderr and "sqlglot" not in done.stderr, done.stderr
        results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
        refused = [r for r in results if r["outcome"] != "missing"]
        assert len(refused) == 3 and all(r["outcome"] != "correct" for r in refused)


def test_a_run_folder_has_one_writer_and_a_killed_writer_blocks_nobody(omop_db, tmp_path):
    """The issue: --resume started beside a run still writing the same folder took no
    lock, and results.jsonl held 57 duplicate lines.  A second run (or --resume) into a
    folder being written fails at once (exit 1), naming the folder and the writer's pid;
    once that writer is killed, its lock file blocks nothing and --resume finishes."""
    preds = tmp_path / "slow.jsonl"
    slow = "```sql\nSELECT count(*) AS n FROM range(4000000000000)\n```"
    with preds.open("w") as f:
        for task in _tasks()[:8]:
            f.write(json.dumps({"task_id": task["id"], "language": "en", "output": slow}) + "\n")
    out = tmp_path / "run"
    args = [sys.executable, "-m", "curate.cli", "score", "run", str(TASKS), str(preds),
            "--out", str(out), "--split", "all", "--language", "en", "--timeout", "3",
            "--no-cache", "--db", str(omop_db), "-q"]  # fmt: skip
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        results = out / "results.jsonl"
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not (results.exists() and results.stat().st_size):
            time.sleep(0.1)
        assert (out / "run.lock").read_text() == f"{first.pid}\n"
        for extra in ([], ["--resume"]):
            second = subprocess.run([*args, *extra], capture_output=True, text=True)
            assert first.poll() is None  # refused while the first still runs: at once
            assert second.returncode == ERROR, second.stderr
            (line,) = second.stderr.strip().splitlines()
            assert line.startswith(f"error: [score] {out}: the run folder is being written by")
            assert f"process {first.pid}" in line
    finally:
        first.kill()  # SIGKILL: no clean-up; the kernel drops its lock
        first.wait()
    assert first.returncode == -9, (first.returncode, len(results.read_text().splitlines()))
    assert (out / "run.lock").exists()  # left behind by the killed run, stale
    before = results.read_text().splitlines()
    assert 0 < len(before) < 277
    resumed = subprocess.run([*args, "--resume", "--jobs", "2"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr
    lines = results.read_text().splitlines()
    keys = [(r["task_id"], r["language"]) for r in map(json.loads, lines)]
    assert len(keys) == len(set(keys)) == 277  # every instance once
    assert not (out / "run.lock").exists()  # a run that ends removes its lock


def test_a_locked_check_makes_no_folder_and_a_stale_lock_file_blocks_nothing(tmp_path):
    from score.errors import ScoringError
    from score.scoring.run_lock import LOCK_FILE, RunLock, check_unlocked

    missing = tmp_path / "not-yet"
    check_unlocked(missing)
    assert not missing.exists()
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / LOCK_FILE).write_text("999999999\n")  # a dead writer's file: no lock held
    check_unlocked(folder)
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from score.scoring.run_lock import RunLock; "
         f"RunLock({str(folder)!r}).acquire(); print('held', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        for attempt in (lambda: check_unlocked(folder), lambda: RunLock(folder).acquire()):
            try:
                attempt()
                raise AssertionError("a held lock was taken")
            except ScoringError as e:
                assert f"process {holder.pid}" in str(e) and str(folder) in str(e)
    finally:
        holder.kill()
        holder.wait()
    with RunLock(folder):  # the holder is gone: its file blocks nothing
        assert (folder / LOCK_FILE).read_text().strip().isdigit()
    assert not (folder / LOCK_FILE).exists()


def test_sigterm_stops_a_scoring_as_ctrl_c_does_and_leaves_no_temporary_folder(omop_db, tmp_path):
    """Issue 57, finding 19: a run ended by SIGTERM (its time limit's ``timeout``) left a
    $TMPDIR/pymp-* folder and its lock file, and said nothing; it ends as Ctrl-C does:
    one line, what was finished kept, nothing left in the temporary folder."""
    from tests.task_factory import make_task, write_task_file

    tasks = write_task_file(tmp_path / "tasks.jsonl", [make_task(f"t{i}") for i in range(3)])
    preds = tmp_path / "slow.jsonl"
    slow = "SELECT count(*) AS n FROM range(4000000000000)"
    with preds.open("w") as f:
        for i in range(3):
            sql = slow if i else "SELECT count(*) AS n FROM cdm.person"
            f.write(json.dumps({"task_id": f"t{i}", "language": "en", "sql": sql}) + "\n")
    tmp, out = tmp_path / "tmp", tmp_path / "run"
    tmp.mkdir()
    args = [sys.executable, "-m", "curate.cli", "score", "run", str(tasks), str(preds),
            "--out", str(out), "--split", "all", "--timeout", "60", "--no-cache",
            "--db", str(omop_db), "-q"]  # fmt: skip
    process = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    results = out / "results.jsonl"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (results.exists() and results.stat().st_size):
        time.sleep(0.1)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == ERROR, err
    (line,) = err.strip().splitlines()
    assert line.startswith("error: [score] stopped by SIGTERM; what was finished is kept")
    assert len(results.read_text().splitlines()) == 1  # the first; the slow ones stopped
    assert not (out / "run.lock").exists()
    assert list(tmp.iterdir()) == []
