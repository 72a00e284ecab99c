"""sqlgold verify --watch: one open database, a new verdict on every save, Ctrl-C ends it."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from curate.verify.watch import changed_files, snapshot, watch

SQLGOLD = str(Path(sys.executable).with_name("sqlgold"))


def _lines(proc: subprocess.Popen) -> queue.Queue:
    out: queue.Queue = queue.Queue()

    def pump() -> None:
        for line in proc.stdout:  # type: ignore[union-attr]
            out.put(line.rstrip("\n"))
        out.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return out


def _until(lines: queue.Queue, marker: str, seen: list[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        if line is None:
            raise AssertionError("verify --watch ended early:\n" + "\n".join(seen))
        seen.append(line)
        if marker in line:
            return
    raise AssertionError(f"no {marker!r} within {timeout} s:\n" + "\n".join(seen))


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _exit_code(proc: subprocess.Popen, seen: list[str], timeout: float = 30) -> int:
    """The exit code after Ctrl-C; a process still running then is killed and the test
    fails with what it printed and where its threads were waiting."""
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        waits = []
        for task in sorted(Path(f"/proc/{proc.pid}/task").glob("*")):
            try:
                waits.append(f"{task.name}: {(task / 'wchan').read_text()}")
            except OSError:
                pass
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(
            f"verify --watch still running {timeout:g} s after Ctrl-C; threads waiting in "
            f"{waits}\nstdout:\n" + "\n".join(seen) + f"\nstderr:\n{err}"
        ) from None


def test_watch_checks_again_on_every_save_and_stops_on_ctrl_c(omop_db, tmp_path):
    gold, answer = tmp_path / "gold.sql", tmp_path / "answer.sql"
    gold.write_text("SELECT COUNT(*) AS n FROM cdm.person", encoding="utf-8")
    answer.write_text("SELECT 1 AS n", encoding="utf-8")
    proc = subprocess.Popen(
        [
            SQLGOLD,
            "verify",
            "--db",
            str(omop_db),
            "--gold",
            str(gold),
            "--answer",
            str(answer),
            "--gold-dialect",
            "duckdb",
            "--watch",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as a terminal delivers it: a test run started in the background (`cmd &`,
        # nohup) has SIGINT ignored, and a child inherits that, so Python would never
        # raise KeyboardInterrupt in it
        preexec_fn=_default_sigint,
    )
    lines, seen = _lines(proc), []
    try:
        _until(lines, "=== watching", seen)
        assert any("DIFFERENT" in line for line in seen)
        time.sleep(0.05)  # a new modification time even on coarse clocks
        answer.write_text("SELECT 1130 AS n", encoding="utf-8")
        _until(lines, "=== watching", seen)
        answer.write_text("SELECT 1130 AS n FROM cdm.person LIMIT 1 -- saved again", "utf-8")
        _until(lines, "=== watching", seen)
    finally:
        proc.send_signal(signal.SIGINT)
        code = _exit_code(proc, seen)
    checks = [line for line in seen if line.startswith("=== check")]
    verdicts = [line for line in seen if line.startswith("verdict")]
    assert len(checks) == 3 and str(answer) in checks[1]
    assert "DIFFERENT" in verdicts[0]
    assert "SAME RESULT" in verdicts[1] and "SAME RESULT" in verdicts[2]
    assert code == 0, proc.stderr.read()  # type: ignore[union-attr]


def test_watch_of_sql_text_is_a_usage_error(omop_db):
    done = subprocess.run(
        [
            SQLGOLD,
            "verify",
            "--db",
            str(omop_db),
            "--gold",
            "SELECT 1",
            "--answer",
            "SELECT 1",
            "--watch",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "--watch needs" in done.stderr


def test_a_file_replaced_by_rename_is_seen(tmp_path):
    target = tmp_path / "gold.sql"
    target.write_text("SELECT 1", encoding="utf-8")
    before = snapshot([target])
    fresh = tmp_path / ".gold.sql.swp"
    fresh.write_text("SELECT 2 -- longer", encoding="utf-8")
    os.replace(fresh, target)
    assert changed_files(before, snapshot([target])) == [target]


def test_watch_calls_once_then_per_change(tmp_path):
    target = tmp_path / "a.sql"
    target.write_text("SELECT 1", encoding="utf-8")
    calls: list[list[Path]] = []

    def check(changed: list[Path]) -> None:
        calls.append(changed)
        if len(calls) == 1:
            threading.Timer(0.1, lambda: target.write_text("SELECT 22", "utf-8")).start()

    watch([target], check, interval=0.02, settle=0.01, runs=2)
    assert calls == [[], [target]]


@pytest.mark.parametrize("missing", [True, False])
def test_snapshot_marks_missing_files(tmp_path, missing):
    path = tmp_path / "x.sql"
    if not missing:
        path.write_text("SELECT 1", encoding="utf-8")
    assert (snapshot([path])[path] is None) is missing


def test_sigterm_ends_watch_as_ctrl_c_does_and_leaves_no_temporary_folder(omop_db, tmp_path):
    """Issue 57, finding 19: SIGTERM (a time limit's ``timeout``, ``kill``) left a
    $TMPDIR/pymp-* folder, where Ctrl-C left nothing; it ends the watch as Ctrl-C does.
    The file watched is a symlink, retargeted while watched (an attack on --watch): the
    check runs again on what it points to now."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    first, second = tmp_path / "first.sql", tmp_path / "second.sql"
    first.write_text("SELECT COUNT(*) AS n FROM cdm.person", encoding="utf-8")
    second.write_text("SELECT COUNT(*) AS n FROM cdm.death -- a longer text", encoding="utf-8")
    link = tmp_path / "gold.sql"
    link.symlink_to(first)
    proc = subprocess.Popen(
        [SQLGOLD, "verify", "--db", str(omop_db), "--gold", str(link),
         "--gold-dialect", "duckdb", "--watch"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )  # fmt: skip
    lines, seen = _lines(proc), []
    try:
        _until(lines, "=== watching", seen)
        assert any(line.strip().startswith("1130") for line in seen), seen
        swap = tmp_path / "gold.sql.new"
        swap.symlink_to(second)
        os.replace(swap, link)  # the symlink replaced, as an editor replaces a file
        _until(lines, "=== watching", seen)
    finally:
        proc.send_signal(signal.SIGTERM)
        code = _exit_code(proc, seen)
    assert code == 0, proc.stderr.read()  # type: ignore[union-attr]
    assert sum(line.startswith("=== check") for line in seen) == 2
    assert any(line.strip().startswith("142") for line in seen[-12:]), seen  # death's rows
    assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    assert list(tmp.iterdir()) == []


@pytest.mark.parametrize("flag", [["--watch"], []])
def test_a_fifo_is_named_as_a_fifo_and_never_read(omop_db, tmp_path, flag):
    """Issue 57, finding 20: `verify --watch --gold FIFO` said "no such file"; a FIFO (or
    a device) is named as what it is, with or without --watch, and never opened (a FIFO
    with no writer would wait forever; /dev/zero never ends)."""
    fifo = tmp_path / "gold.sql"
    os.mkfifo(fifo)
    for gold, kind in ((fifo, "a FIFO"), (Path("/dev/zero"), "a character device")):
        done = subprocess.run(
            [SQLGOLD, "verify", "--db", str(omop_db), "--gold", str(gold), *flag],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"error: [verify] {gold}: --gold: {kind}, not a ")
