"""The files of a generation run: nothing half-written, and resumable.

For ``--out preds.jsonl``:

* ``preds.run.json``, the run: what was asked of which model with which prompt
  (template and schema sha256, database fingerprint, split, settings), written
  atomically when the run starts and again, with counts, when it finishes.  ``--resume``
  refuses a run whose identity (:data:`IDENTITY_KEYS`) changed;
* ``preds.jsonl.journal``: one prediction per line, appended and flushed in completion
  order as answers arrive, so a killed run loses at most the answers in flight (a torn
  last line is cut off on resume);
* ``preds.jsonl``: written atomically (temporary file and rename) when the run finishes,
  sorted by task id and language whatever the order answers came in (``--jobs``), with
  sorted keys; then the journal is removed.

A resumed run keeps every answer already in ``preds.jsonl`` or the journal and asks the
model only for the instances without one; an instance whose call failed
(``generation_error``) counts as without one and is asked again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from score.files import write_atomic
from score.generate.errors import GenerationError
from score.inputs.jsonl import read_lines

RUN_FORMAT = "sqlgold.generation/1"
GENERATION_ERROR = "generation_error"

#: The run.json keys that must be equal for --resume to continue a run.
IDENTITY_KEYS = (
    "run",
    "model",
    "mode",
    "tasks_sha256",
    "split",
    "languages",
    "today",
    "top_k",
    "max_tokens",
    "temperature",
    "token_limit_param",
    "template_sha256",
    "schema_sha256",
    "grounding_sha256",
    "database_fingerprint",
)

Key = tuple[str, str]


def dumps_line(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False) + "\n"


def _meta_text(meta: dict[str, Any]) -> str:
    return json.dumps(meta, sort_keys=True, indent=2) + "\n"


def run_path(out: Path) -> Path:
    """``preds.jsonl`` -> ``preds.run.json``.

    >>> run_path(Path("runs/preds.jsonl")).as_posix(), run_path(Path("p")).as_posix()
    ('runs/preds.run.json', 'p.run.json')
    """
    return out.with_suffix(".run.json")


def journal_path(out: Path) -> Path:
    return out.with_name(out.name + ".journal")


def _key(record: dict[str, Any]) -> Key:
    return (record["task_id"], record["language"])


class PredictionFiles:
    """The output files of one generation run (see the module docstring)."""

    def __init__(self, out: str | Path, meta: dict[str, Any], *, resume: bool) -> None:
        self.out = Path(out)
        self.run_path = run_path(self.out)
        self.journal_path = journal_path(self.out)
        self.meta = {"format": RUN_FORMAT, **meta, "finished": False}
        self.records: dict[Key, dict[str, Any]] = {}
        existing = [p for p in (self.out, self.journal_path) if p.exists()]
        if existing and not resume:
            raise GenerationError(
                "predictions or an interrupted run are already there; pass --resume to "
                "complete them, or choose another --out",
                path=str(existing[0]),
            )
        if existing:
            self._check_same_run()
            if self.out.exists():
                self._read(self.out, torn_ok=False)
            if self.journal_path.exists():
                self._read(self.journal_path, torn_ok=True)
        self.out.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(self.run_path, _meta_text(self.meta), fsync=True)
        self._journal = self.journal_path.open("a", encoding="utf-8")

    def _check_same_run(self) -> None:
        try:
            old = json.loads(self.run_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise GenerationError(
                "cannot resume: the run file is missing or unreadable", path=str(self.run_path)
            ) from None
        if old.get("format") != RUN_FORMAT:
            raise GenerationError(
                f"cannot resume: unknown run format {old.get('format')!r}", path=str(self.run_path)
            )
        differ = [k for k in IDENTITY_KEYS if old.get(k) != self.meta.get(k)]
        if differ:
            raise GenerationError(
                f"--resume of a different run: {', '.join(differ)} changed",
                path=str(self.run_path),
            )

    def _read(self, path: Path, *, torn_ok: bool) -> None:
        """Read predictions line by line, each under the bound on a line; with
        ``torn_ok`` a bad last line (the kill came mid-write) is cut off."""
        good = 0
        torn: int | None = None  # a bad line, forgiven only if no line follows it
        with path.open("r+b") as f:
            lines = read_lines(f, path=path, stage="generate", keep_ends=True)
            for number, line in enumerate(lines, start=1):
                if torn is not None:
                    break
                try:
                    if not line.endswith(b"\n"):
                        raise ValueError("no newline")
                    record = json.loads(line)
                    key = _key(record)
                except (ValueError, KeyError, TypeError):
                    if torn_ok:
                        torn = number
                        continue
                    raise GenerationError(
                        "cannot resume: not a prediction line", path=str(path), line=number
                    ) from None
                self.records[key] = record
                good += len(line)
            else:
                if torn is not None:  # the torn line was the last: cut it off
                    f.truncate(good)
                return
        raise GenerationError("cannot resume: not a prediction line", path=str(path), line=torn)

    def answered(self) -> frozenset[Key]:
        """Instances with an answer (a failed call is not one)."""
        return frozenset(k for k, r in self.records.items() if r.get("status") != GENERATION_ERROR)

    def append(self, record: dict[str, Any]) -> None:
        self._journal.write(dumps_line(record))
        self._journal.flush()
        self.records[_key(record)] = record

    def close(self) -> None:
        if not self._journal.closed:
            self._journal.flush()
            os.fsync(self._journal.fileno())
            self._journal.close()

    def finish(self, summary: dict[str, Any]) -> None:
        """Write the sorted predictions file and the finished run file; drop the journal."""
        self.close()
        text = "".join(dumps_line(self.records[k]) for k in sorted(self.records))
        write_atomic(self.out, text, fsync=True)
        self.meta = {**self.meta, **summary, "finished": True}
        write_atomic(self.run_path, _meta_text(self.meta), fsync=True)
        self.journal_path.unlink(missing_ok=True)
