"""Every line sqlgold reads from a user's file is bounded (score.defaults.MAX_LINE_BYTES):
a longer line stops the read with an error naming the file, the line, the bound and the
stage, after reading at most the bound of it.  The red team's case: a predictions file
that is one 4 GB line of NUL bytes drove scoring past 6 GB before anything was said."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from curate.sources.load import load_sources
from score import defaults
from score.errors import InputError
from score.inputs.jsonl import read_lines
from score.inputs.predictions import read_predictions
from score.inputs.task_file import read_task_file, task_file_header, task_line
from score.scoring.run_folder import read_run
from tests.task_factory import make_task

MiB = 2**20


def sparse_line(path: Path, size: int, before: bytes = b"") -> Path:
    """A file of ``before`` and then one line of ``size`` NUL bytes (sparse: no disk)."""
    with path.open("wb") as f:
        f.write(before)
        f.truncate(len(before) + size)
    return path


@pytest.fixture
def one_mib_bound(monkeypatch):
    monkeypatch.setattr(defaults, "MAX_LINE_BYTES", MiB)


def test_a_line_at_the_bound_is_read_and_one_byte_more_is_not() -> None:
    assert list(read_lines(io.BytesIO(b"abcd\nef"), limit=4)) == [b"abcd", b"ef"]
    assert list(read_lines(io.BytesIO(b"abcd"), limit=4)) == [b"abcd"]
    with pytest.raises(InputError) as e:
        list(read_lines(io.BytesIO(b"ok\nabcde\n"), path="x.jsonl", stage="tasks", limit=4))
    assert (e.value.path, e.value.line, e.value.stage) == ("x.jsonl", 2, "tasks")
    assert "longer than 4 bytes" in str(e.value)


def test_predictions_one_huge_line(tmp_path, one_mib_bound) -> None:
    path = sparse_line(tmp_path / "preds.jsonl", 100 * MiB, b'{"task_id": "t1"}\n')
    with pytest.raises(InputError) as e:
        read_predictions(path, [make_task("t1")])
    assert str(e.value).startswith(
        f"[predictions] {path}:2: line 2 is longer than 1 MiB ({MiB} bytes), the bound"
    )


def test_task_file_with_a_huge_line(tmp_path, one_mib_bound) -> None:
    task = make_task("t1")
    header = task_line(task_file_header([task])).encode()
    path = sparse_line(tmp_path / "tasks.jsonl", 100 * MiB, header)
    with pytest.raises(InputError) as e:
        read_task_file(path)
    assert (e.value.stage, e.value.path, e.value.line) == ("tasks", str(path), 2)
    assert "longer than 1 MiB" in str(e.value)


@pytest.mark.parametrize(
    ("fmt", "name"),
    [
        ("jsonl", "s.jsonl"),
        ("funsql", "s.json"),
        ("querylibrary", "p.md"),
        ("text2omop", "t.jsonl"),
    ],
)
def test_every_source_format(tmp_path, one_mib_bound, fmt: str, name: str) -> None:
    folder = tmp_path / "src"
    folder.mkdir()
    path = sparse_line(folder / name, 100 * MiB, b"# a title\n")
    with pytest.raises(InputError) as e:
        load_sources(path, fmt)
    assert (e.value.stage, e.value.path, e.value.line) == ("import", str(path), 2)


def test_a_run_folder_read_by_score_report(tmp_path, one_mib_bound) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"format": "sqlgold.run/1"}))
    (tmp_path / "summary.json").write_text("{}")
    sparse_line(tmp_path / "results.jsonl", 10 * MiB)
    with pytest.raises(InputError) as e:
        read_run(tmp_path)
    assert (e.value.stage, e.value.line) == ("score", 1)


def test_memory_stays_bounded_on_a_100_mb_line(tmp_path) -> None:
    """In a fresh process: the peak RSS grows by about the bound (1 MiB here), not by
    the line (100 MB; read whole it took 2.3x the line)."""
    path = sparse_line(tmp_path / "preds.jsonl", 100 * MiB)
    script = textwrap.dedent(
        f"""
        import resource
        from score import defaults
        from score.errors import InputError
        from score.inputs.predictions import read_predictions
        from tests.task_factory import make_task
        defaults.MAX_LINE_BYTES = {MiB}
        task = make_task("t1")
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            read_predictions({str(path)!r}, [task])
            message = "read"
        except InputError as e:
            message = str(e)
        print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
        print(message)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    grown_kib, message = done.stdout.strip().splitlines()
    assert int(grown_kib) < 20 * 1024, grown_kib  # KiB: the 100 MB line was never held
    assert "line 1 is longer than 1 MiB" in message


def test_score_run_refuses_the_line_in_one_line_of_stderr(tmp_path, omop_db) -> None:
    """Through the CLI, with the default bound (16 MiB): exit 1, the file, line and
    bound named, no output folder made."""
    from click.testing import CliRunner

    from curate.cli import main
    from tests.paths import REPO

    preds = sparse_line(tmp_path / "preds.jsonl", 100 * MiB)
    out = tmp_path / "run"
    tasks = REPO / "data" / "benchmark" / "omop_tasks.jsonl"
    args = ["score", "run", str(tasks), str(preds), "--out", str(out), "--db", str(omop_db)]
    done = CliRunner().invoke(main, [*args, "-q"])
    assert done.exit_code == 1
    assert done.output.strip() == (
        f"error: [predictions] {preds}:1: line 1 is longer than 16 MiB ({16 * MiB} bytes), "
        "the bound on one line of an input file (MAX_LINE_BYTES in score/defaults.py); "
        f"nothing past its first {16 * MiB + 1} bytes was read"
    )
    assert not out.exists()


def test_resume_reads_results_under_the_bound_and_still_cuts_a_torn_line(
    tmp_path, one_mib_bound
) -> None:
    from score.scoring.run_folder import RunDir, dumps

    (tmp_path / "run.json").write_text(dumps({}))
    sparse_line(tmp_path / "results.jsonl", 10 * MiB, b'{"task_id": "t1", "language": "en"}\n')
    with pytest.raises(InputError) as e:
        RunDir(tmp_path, {}, resume=True)
    assert (e.value.stage, e.value.line) == ("score", 2)
    assert not (tmp_path / "run.lock").exists()  # the refused resume let the folder go
    whole = b'{"task_id": "t1", "language": "en"}\n'
    (tmp_path / "results.jsonl").write_bytes(whole + b'{"task_id": "t2", "lang')
    run = RunDir(tmp_path, {}, resume=True)
    run.release()
    assert set(run.done) == {("t1", "en")}
    assert (tmp_path / "results.jsonl").read_bytes() == whole
