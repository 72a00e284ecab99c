"""A scoring run's folder: streamed results, resumable, and its final files.

Layout of ``--out DIR``:

* ``run.json``: what was scored with what (task file and predictions with their
  sha256, run label, comparator profile, database fingerprint, executor settings,
  versions).  ``--resume`` refuses a folder whose run.json describes another run.
* ``run.lock``: there only while a ``score run`` writes the folder
  (:mod:`score.scoring.run_lock`): a second one into it fails at once.
* ``results.jsonl``: one line per instance, appended and flushed as each finishes,
  so an interrupted run loses nothing it finished; at the end the file is rewritten
  sorted by (task id, language) so reruns give the same order.
* ``summary.json`` (scripts read its names), ``results.json`` (every instance plus
  the summary, ``schemas/results.schema.json``), ``priors.json`` (the summaries of
  seed 004's two input-blind baselines on the same tasks).
* ``report.html``: the review page (every instance, openable; written by
  :func:`score.scoring.run.run_scoring` and ``sqlgold score report``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from score.errors import ScoringError
from score.files import write_atomic
from score.inputs.jsonl import read_lines
from score.scoring.run_lock import RunLock

RUN_FORMAT = "sqlgold.run/1"
RESULTS_FORMAT = "sqlgold.results/2"
RESULTS = "results.jsonl"
RUN_META = "run.json"
SUMMARY = "summary.json"
RESULTS_JSON = "results.json"
PRIORS = "priors.json"
#: What a run folder may hold: what score run writes, and the report score report adds.
RUN_FOLDER_FILES = frozenset(
    {RUN_META, RESULTS, SUMMARY, RESULTS_JSON, PRIORS, "run.lock", "report.html", "report.md",
     "chart.svg"}
)  # fmt: skip

#: run.json keys that must be equal for --resume to continue a folder.
IDENTITY_KEYS = (
    "tasks_sha256",
    "predictions_sha256",
    "split",
    "run",
    "profile",
    "languages",
    "database_fingerprint",
    "suite",
    "settings",
)


def dumps(value: Any) -> str:
    """Deterministic JSON text: sorted keys, UTF-8 kept, no trailing spaces."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def instance_key(record: dict[str, Any]) -> tuple[str, str]:
    return (record["task_id"], record["language"])


class RunDir:
    """Streams result records into a run folder and finishes it."""

    def __init__(self, path: str | Path, meta: dict[str, Any], *, resume: bool = False) -> None:
        self.path = Path(path)
        self.meta = {"format": RUN_FORMAT, **meta}
        self.results_path = self.path / RESULTS
        self.done: dict[tuple[str, str], dict[str, Any]] = {}
        self.path.mkdir(parents=True, exist_ok=True)
        self._lock = RunLock(self.path).acquire()  # one writer: held until finish/release
        try:
            existing = self.path / RUN_META
            if existing.exists() or self.results_path.exists():
                if not resume:
                    raise ScoringError(
                        "the folder already holds a run; pass --resume to continue it, or "
                        "choose another --out",
                        path=str(self.path),
                    )
                self._check_same_run(existing)
                self.done = self._read_finished()
            write_atomic(existing, dumps(self.meta))
            self._out = self.results_path.open("a", encoding="utf-8")
        except BaseException:
            self._lock.release()
            raise

    def _check_same_run(self, existing: Path) -> None:
        try:
            old = json.loads(existing.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ScoringError("cannot read run.json to resume", path=str(existing)) from None
        differ = [k for k in IDENTITY_KEYS if old.get(k) != self.meta.get(k)]
        if differ:
            raise ScoringError(
                f"--resume of a different run: {', '.join(differ)} changed",
                path=str(self.path),
            )

    def _read_finished(self) -> dict[tuple[str, str], dict[str, Any]]:
        """Records already written; a torn last line (the kill came mid-write) is cut off."""
        done: dict[tuple[str, str], dict[str, Any]] = {}
        if not self.results_path.exists():
            return done
        good = 0
        with self.results_path.open("r+b") as f:
            # line by line under the bound on a line (a file planted here is read as
            # carefully as the user's own inputs)
            lines = read_lines(f, path=self.results_path, stage="score", keep_ends=True)
            for line in lines:
                if not line.endswith(b"\n"):
                    break
                try:
                    record = json.loads(line)
                except ValueError:
                    break
                done[instance_key(record)] = record
                good += len(line)
            if good != f.seek(0, os.SEEK_END):
                f.truncate(good)
        return done

    def append(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n")
        self._out.flush()
        self.done[instance_key(record)] = record

    def release(self) -> None:
        """Close results.jsonl and let another run write this folder."""
        self.close()
        self._lock.release()

    def close(self) -> None:
        if not self._out.closed:
            self._out.flush()
            os.fsync(self._out.fileno())
            self._out.close()

    def records(self) -> list[dict[str, Any]]:
        return [self.done[k] for k in sorted(self.done)]

    def finish(self, summary: dict[str, Any], priors: Iterable[dict[str, Any]] = ()) -> None:
        """Rewrite results.jsonl in instance order and write the summary files."""
        self.close()
        records = self.records()
        write_atomic(
            self.results_path,
            "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in records),
        )
        write_atomic(self.path / SUMMARY, dumps(summary))
        write_atomic(
            self.path / RESULTS_JSON,
            dumps(
                {
                    "format": RESULTS_FORMAT,
                    "run": self.meta,
                    "summary": summary,
                    "instances": records,
                }
            ),
        )
        priors = list(priors)
        if priors:
            write_atomic(self.path / PRIORS, dumps({p["run"]: p for p in priors}))
        self.release()


def read_run(path: str | Path) -> dict[str, Any]:
    """A finished run folder: its meta, summary, records and prior summaries."""
    path = Path(path)
    current = path / RUN_META
    try:
        meta = json.loads(current.read_text(encoding="utf-8"))
        current = path / SUMMARY
        summary = json.loads(current.read_text(encoding="utf-8"))
        if meta.get("format") != RUN_FORMAT:
            raise ScoringError(f"unknown run format {meta.get('format')!r}", path=str(path))
        records = []
        current = path / RESULTS
        with current.open("rb") as f:
            for number, line in enumerate(read_lines(f, path=current, stage="score"), start=1):
                if line.strip():
                    try:
                        records.append(json.loads(line))
                    except ValueError as e:
                        where = {"path": str(current), "line": number}
                        raise ScoringError(f"not JSON: {e}", **where) from None
        current = path / PRIORS
        priors = json.loads(current.read_text(encoding="utf-8")) if current.exists() else {}
    except FileNotFoundError as e:
        raise ScoringError(
            f"not a finished run folder ({Path(e.filename).name} missing)", path=str(path)
        ) from None
    except UnicodeDecodeError as e:
        raise ScoringError(f"not UTF-8 text: {e.reason}", path=str(current)) from None
    except ValueError as e:
        raise ScoringError(f"not JSON: {e}", path=str(current)) from None
    except OSError as e:
        raise ScoringError(f"cannot read: {e.strerror or e}", path=str(current)) from None
    return {"meta": meta, "summary": summary, "records": records, "priors": priors}
