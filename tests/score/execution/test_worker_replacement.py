"""A query process that may be in another state than a new one after a query (it was
killed or died, ran short of memory, or grew) is replaced before the next query, the
replacement started at once in the background; what a query process prints never
reaches the terminal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest

from score.errors import DatabaseError
from score.execution.executor import Executor, ExecutorSettings
from score.execution.result import QueryError
from score.scoring.run import ScoringOptions, run_scoring
from tests.paths import REPO
from tests.task_factory import make_task, write_task_file

UNINTERRUPTIBLE = "SELECT length(lpad('x', 200000000, 'y')) AS n"  # about 3 s, in one call
#: Uninterruptible as UNINTERRUPTIBLE, but holds its ~350 MB within its first second
#: (a 150 MB string made at once, then padded), so a kill at 0.75 s finds it heavy even
#: on a loaded machine (UNINTERRUPTIBLE grows its one string at ~100 MB/s).
HEAVY_EARLY = "SELECT length(lpad(repeat('y', 150000000), 200000000, 'x')) AS n"
#: Holds a 100 MB string for a moment: a quarter of a 400MB memory limit.
HEAVY = "SELECT length(lpad('x', 100000000, 'y')) AS n"
ABORTED = "terminate called after throwing an instance of 'std::bad_alloc'"


@dataclass(frozen=True)
class Abort:
    """A request that prints what DuckDB prints before it aborts, and aborts."""

    timed: ClassVar[bool] = False

    def handle(self, session: Any) -> None:
        os.write(2, (ABORTED + "\n  what():  std::bad_alloc\n").encode())
        os.abort()


@dataclass(frozen=True)
class LoseTheDatabase:
    """A request that finds the database gone, as a Spark query meeting a stopped
    SparkContext does."""

    timed: ClassVar[bool] = False

    def handle(self, session: Any) -> None:
        raise DatabaseError("the server went away", path="sc://nowhere:1")


def _join_replacements(ex: Executor) -> None:
    for thread in list(ex._pool._replacing):
        thread.join()


def test_a_killed_process_is_replaced_before_the_next_query_asks(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        with pytest.raises(QueryError) as caught:
            ex.execute(UNINTERRUPTIBLE)
        assert caught.value.kind == "timeout" and "process was ended" in caught.value.message
        _join_replacements(ex)  # started without any query asking for it, and a spare
        assert ex._pool.started_ahead == 2 and ex.workers_started == 3
        assert ex.execute("SELECT 2 AS n").rows() == [(2,)]
        assert ex.workers_started == 3  # the next query ran in one: none started in a call


def test_a_query_right_after_a_kill_takes_the_replacement_under_way(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        with pytest.raises(QueryError):
            ex.execute(UNINTERRUPTIBLE)
        # asked at once: it waits for the replacement (outside its time limit) and
        # runs in it, instead of timing out or starting a process of its own
        assert ex.execute("SELECT 3 AS n").rows() == [(3,)]
        _join_replacements(ex)
        assert ex.workers_started == 3 and ex._pool.started_ahead == 2


def test_after_a_first_kill_the_lane_keeps_a_spare_for_the_next(omop_db: Path):
    """The query after a later kill finds a process ready (the spare) instead of waiting
    for one to start; a retired process (one that grew) brings no spare."""
    from score.execution.processes.messages import QUERY_LANE

    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        assert ex.execute("SELECT 1 AS n").rows() == [(1,)]
        with pytest.raises(QueryError):
            ex.execute(HEAVY_EARLY)
        _join_replacements(ex)
        lane = ex._pool._lanes[QUERY_LANE]
        assert len(lane.idle) == 2 and lane.spare
        with pytest.raises(QueryError):
            ex.execute(HEAVY_EARLY)
        assert len(lane.idle) >= 1  # right after the kill: the spare, ready
        assert ex.execute("SELECT 6 AS n").rows() == [(6,)]
        _join_replacements(ex)
        assert ex.workers_started == 4 and len(lane.idle) == 2  # one replacement, no spare
        # the memory bound counts the spare as an idle process, not as a second heavy one,
        # and, never used, at what it held when ready
        assert lane.most_busy == 1 and lane.most_alive == 2
        assert lane.most_idle_kib == lane.ready_kib
        heaviest = max(lane.retired_peaks_kib)  # a killed one held the strings
        assert heaviest > 200_000
        assert heaviest <= ex.workers_peak_rss_by_lane()[QUERY_LANE] < 2 * heaviest
    with Executor(
        omop_db, settings=ExecutorSettings(timeout_seconds=20, memory_limit="400MB")
    ) as ex:
        ex.try_execute(HEAVY)
        _join_replacements(ex)
        assert ex._pool.retired == 1 and ex.workers_started == 2
        assert not ex._pool._lanes[QUERY_LANE].spare


def test_a_process_that_grew_is_retired_and_the_same_query_gives_the_same_outcome(omop_db):
    settings = ExecutorSettings(timeout_seconds=20, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        alone = ex.try_execute(HEAVY)
    with Executor(omop_db, settings=settings) as ex:
        first = ex.try_execute(HEAVY)
        assert ex._pool.retired == 1  # it held a quarter of the memory limit
        after = ex.try_execute(HEAVY)
        assert ex._pool.retired == 2
        _join_replacements(ex)
        assert ex.workers_started == 3
    assert alone.rows() == first.rows() == after.rows() == [(100000000,)]


def test_a_light_query_keeps_its_process(omop_db: Path):
    with Executor(omop_db, settings=ExecutorSettings(memory_limit="400MB")) as ex:
        for n in range(20):
            assert ex.execute(f"SELECT count(*) + {n} AS n FROM cdm.person").rows()
        assert ex._pool.retired == 0 and ex.workers_started == 1


def test_a_process_out_of_memory_is_retired(omop_db: Path):
    settings = ExecutorSettings(timeout_seconds=20, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        failed = ex.try_execute("SELECT len(range(300000000)) AS n")
        assert isinstance(failed, QueryError) and failed.kind == "runtime_error"
        assert ex._pool.retired == 1
        assert ex.execute("SELECT 1 AS n").rows() == [(1,)]


def test_what_a_dying_process_prints_is_its_reason_not_a_terminal_line(omop_db: Path):
    script = (
        "from score.execution.executor import Executor\n"
        "from score.execution.result import QueryError\n"
        "from tests.score.execution.test_worker_replacement import Abort\n"
        "import sys\n"
        f"with Executor({str(omop_db)!r}) as ex:\n"
        "    try:\n"
        "        ex.call(Abort())\n"
        "    except QueryError as e:\n"
        "        print(e.kind, e.message)\n"
        "    print(ex.execute('SELECT 5 AS n').rows())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "terminate called" not in done.stderr and "bad_alloc" not in done.stderr
    first, second = done.stdout.splitlines()
    assert first.startswith("runtime_error the query process was killed (signal 6, SIGABRT)")
    assert ABORTED in first and "what():  std::bad_alloc" in first
    assert second == "[(5,)]"


def test_a_fresh_run_after_a_kill_takes_the_replacement_started_ahead(omop_db: Path):
    """A gold that timed out is run again in a fresh process: the one started ahead,
    never used, is one (no third process is started)."""
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:
        with pytest.raises(QueryError):
            ex.execute(UNINTERRUPTIBLE)
        _join_replacements(ex)  # the replacement and the spare
        assert ex.execute("SELECT 4 AS n", fresh=True).rows() == [(4,)]
        assert ex.workers_started == 3
        assert ex.execute("SELECT 5 AS n", fresh=True).rows() == [(5,)]  # the spare
        assert ex.workers_started == 3
        assert ex.execute("SELECT 6 AS n", fresh=True).rows() == [(6,)]
        assert ex.workers_started == 4  # a used one is not fresh: a new one is started


def test_a_heavy_prediction_scores_the_same_alone_and_after_others(omop_db, tmp_path):
    """In a full run each heavy answer's process is retired after it, so the heavy
    answer after them is scored as it is alone (its own run, as after a --resume that
    starts with it)."""
    tasks = [make_task(f"h{i}", "SELECT 100000000 AS n", expect=((100000000,),)) for i in range(3)]
    tasks_path = write_task_file(tmp_path / "tasks.jsonl", tasks)
    lines = [{"task_id": t["id"], "sql": HEAVY} for t in tasks]
    (tmp_path / "all.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "last.jsonl").write_text(json.dumps(lines[-1]) + "\n")
    settings = ExecutorSettings(timeout_seconds=20, memory_limit="400MB")
    outcomes = {}
    for name in ("all", "last"):
        with Executor(omop_db, settings=settings) as ex:
            run_scoring(
                tasks_path,
                tmp_path / f"{name}.jsonl",
                tmp_path / name,
                ex,
                ScoringOptions(cache_dir=None, with_priors=False, split="all"),
            )
            if name == "all":
                assert ex._pool.retired >= 3  # each heavy answer's process, after it
        records = [json.loads(x) for x in (tmp_path / name / "results.jsonl").open()]
        outcomes[name] = {r["task_id"]: (r["outcome"], r["reason"]) for r in records}
    assert outcomes["all"]["h2"] == outcomes["last"]["h2"]
    assert outcomes["all"]["h2"][0] == "correct"


def test_threads_losing_processes_at_once_each_get_a_process(omop_db: Path):
    """Three threads whose processes are killed together wait for the replacements under
    way or start their own; none waits for ever, and each next query is answered."""
    settings = ExecutorSettings(timeout_seconds=0.5, memory_limit="400MB")
    with Executor(omop_db, settings=settings) as ex:

        def lane(n: int) -> tuple[str, list]:
            killed = ex.try_execute(UNINTERRUPTIBLE)
            return getattr(killed, "kind", "ok"), ex.execute(f"SELECT {n} AS n").rows()

        with ThreadPoolExecutor(max_workers=3) as pool:
            done = list(pool.map(lane, range(3)))
        assert done == [("timeout", [(n,)]) for n in range(3)]
        assert ex.workers_replaced == 3


def test_a_database_gone_is_the_callers_error_not_a_query_outcome(omop_db: Path):
    """A database that went away mid-run (a Spark server whose context stopped) is raised
    as a DatabaseError, never recorded as the outcome of the query that met it; the
    process that met it is not used again."""
    with Executor(omop_db, settings=ExecutorSettings()) as ex:
        with pytest.raises(DatabaseError) as caught:
            ex.call(LoseTheDatabase())
        assert caught.value.message == "the server went away"
        assert caught.value.path == "sc://nowhere:1"
        assert ex.execute("SELECT 2 AS n").rows() == [(2,)]
        assert ex.workers_started == 2


def _busy(ex: Executor) -> list[Any]:
    """The query processes handed out for a request and not yet given back."""
    with ex._pool._lock:
        return [w for held in ex._pool._lanes.values() for w in held.busy]


def test_a_process_killed_while_a_thread_reads_it_is_closed_once(omop_db: Path):
    """The stop 61 CI failure: a run stopped by SIGTERM ended with ``[io] Bad file
    descriptor``.  The executor's close kills each query process, among them one a
    lane's thread is reading; that thread, finding it gone, closes the same pipe, and
    both closed one descriptor.  Here the reading thread's close is held open between
    closing the descriptor and marking the pipe closed, the window the two met in, while
    the supervisor kills the process as the close does."""
    slow = "SELECT count(*) AS n FROM range(4000000000000)"
    with Executor(omop_db) as ex:
        seen: list[object] = []
        reader = threading.Thread(target=lambda: seen.append(ex.try_execute(slow)))
        reader.start()
        deadline = time.monotonic() + 30
        while not (busy := _busy(ex)) and time.monotonic() < deadline:
            time.sleep(0.01)
        (worker,) = busy
        close_fd = worker._conn._close
        worker._conn._close = lambda: (close_fd(), time.sleep(0.5))
        os.kill(worker.process.pid, signal.SIGKILL)  # the reader sees it gone and closes
        time.sleep(0.2)
        worker.kill()  # raises nothing: the pipe is closed once
        reader.join(30)
        (outcome,) = seen
        assert isinstance(outcome, QueryError), outcome
