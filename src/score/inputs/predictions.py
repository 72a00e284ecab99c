"""Reading model predictions, with every bad line reported by its number.

Two formats (each with a JSON Schema in ``schemas/``):

* predictions JSONL (``predictions.schema.json``): ``task_id``, optional ``language``
  (default ``en``), optional ``run`` label, either ``output`` (raw model text) or
  ``sql`` (a ready query), optional ``status`` (``generation_error``, ``cut_off``) and
  ``context``;
* a StreamSQLBench-style index (``csv_index.schema.json``): ``task_id`` and ``csv``,
  the path of a CSV file holding the final relation, or null for a terminal failure.
  The file is read at scoring time in the sandbox
  (:meth:`score.execution.executor.Executor.read_csv`) and must be a regular file inside the index's
  folder; one that is not, or cannot be read, is that instance's ``execute_error``;
* a TEXT-TO-OMOP result file (``input``, ``gold``, ``pred`` per line,
  :mod:`score.inputs.text2omop`), recognised by those fields: a line answers the task
  its question and gold make the id of, and its ``pred`` is used as that benchmark's
  evaluator uses it (kind ``pred``).  Lines whose task is not in the task set (an item
  curation dropped) are counted (``without_task``), not scored.

The denominator is always the whole task set: an instance with no prediction is
scored ``missing`` by the scorer, never skipped.  Malformed lines, unknown task ids,
unknown languages and duplicate predictions are problems, each with its line number
(so are lines that are not UTF-8, nest too deeply, or hold a lone surrogate).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from score.errors import InputError
from score.inputs.jsonl import numbered_json_file
from score.inputs.schemas import validation_errors
from score.inputs.text2omop import RESULT_FIELDS, field_problem, is_result_line, item_ids

PREDICTIONS = "predictions"
CSV_INDEX = "csv_index"
TEXT2OMOP = "text2omop"


@dataclass(frozen=True)
class Prediction:
    """One model answer to one instance."""

    task_id: str
    language: str = "en"
    run: str | None = None
    output: str | None = None
    sql: str | None = None
    kind: str = "output"  # "output", "sql", "csv" or "pred" (TEXT-TO-OMOP's, in output)
    status: str | None = None
    context: str | None = None
    csv: str | None = None  # the result CSV's path as given (kind "csv"); None = failure
    csv_folder: str | None = None  # the index's folder: relative paths start there
    line: int | None = None

    @property
    def key(self) -> tuple[str, str]:
        return (self.task_id, self.language)


@dataclass(frozen=True)
class Problem:
    line: int
    reason: str  # malformed_json, schema, unknown_task, unknown_language, duplicate, run
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass
class PredictionSet:
    """The predictions of one run, keyed by instance, and the problems found reading them."""

    path: str
    format: str
    run: str
    by_key: dict[tuple[str, str], Prediction] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    without_task: int = 0  # TEXT-TO-OMOP result lines whose task is not in the task set

    def raise_problems(self) -> None:
        if self.problems:
            shown = "; ".join(str(p) for p in self.problems[:10])
            more = f" (+{len(self.problems) - 10} more)" if len(self.problems) > 10 else ""
            raise InputError(
                f"{len(self.problems)} bad prediction line(s): {shown}{more}",
                stage="predictions",
                path=self.path,
            )


def detect_format(records: Iterable[dict[str, Any]]) -> str:
    for record in records:
        if is_result_line(record):
            return TEXT2OMOP
        return CSV_INDEX if "csv" in record else PREDICTIONS
    return PREDICTIONS


def read_predictions(
    path: str | Path,
    tasks: list[dict[str, Any]],
    *,
    run: str | None = None,
    fmt: str | None = None,
) -> PredictionSet:
    """Read a predictions file against ``tasks``; problems are collected, not raised.

    When the file holds several run labels, ``run`` picks one (else it is a problem).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError("no such predictions file", stage="predictions", path=str(path))
    languages = {t["id"]: set(t["questions"]) for t in tasks}
    parsed: list[tuple[int, dict[str, Any]]] = []
    problems: list[Problem] = []
    for number, record, error in numbered_json_file(path, stage="predictions"):
        if error is not None or not isinstance(record, dict):
            problems.append(Problem(number, "malformed_json", error or "not a JSON object"))
            continue
        parsed.append((number, record))
    fmt = fmt or detect_format(r for _, r in parsed)
    if fmt == TEXT2OMOP:
        label = run if run is not None else path.stem
        return _result_file(PredictionSet(str(path), fmt, label, problems=problems), parsed, tasks)
    runs = sorted({r.get("run") or "" for _, r in parsed})
    if run is None and len(runs) > 1:
        raise InputError(
            f"the file holds several runs ({', '.join(r or '(unlabelled)' for r in runs)}); "
            "choose one with --run",
            stage="predictions",
            path=str(path),
        )
    label = run if run is not None else (runs[0] if runs and runs[0] else path.stem)
    result = PredictionSet(str(path), fmt, label, problems=problems)
    first_line: dict[tuple[str, str], int] = {}
    for number, record in parsed:
        if run is not None and (record.get("run") or "") != run:
            continue
        message = _shape_problem(record, fmt)
        if message:
            result.problems.append(Problem(number, "schema", message))
            continue
        task_id, language = record["task_id"], record.get("language", "en")
        if task_id not in languages:
            result.problems.append(Problem(number, "unknown_task", f"unknown task id {task_id!r}"))
            continue
        if language not in languages[task_id]:
            known = ", ".join(sorted(languages[task_id]))
            result.problems.append(
                Problem(
                    number,
                    "unknown_language",
                    f"task {task_id!r} has no {language!r} question (it has {known})",
                )
            )
            continue
        key = (task_id, language)
        if key in first_line:
            result.problems.append(
                Problem(
                    number,
                    "duplicate",
                    f"second prediction for {task_id!r} ({language}); "
                    f"first on line {first_line[key]}",
                )
            )
            continue
        first_line[key] = number
        result.by_key[key] = _prediction(record, fmt, number, path.parent)
    return result


def _result_file(
    result: PredictionSet, parsed: list[tuple[int, dict[str, Any]]], tasks: list[dict[str, Any]]
) -> PredictionSet:
    """A TEXT-TO-OMOP result file's lines as predictions of kind ``pred`` (English)."""
    readable = []
    for number, record in parsed:
        message = field_problem(record, RESULT_FIELDS)
        if message:
            result.problems.append(Problem(number, "schema", message))
        else:
            readable.append((number, record))
    known = {t["id"] for t in tasks}
    ids = item_ids((r["input"], r["gold"]) for _, r in readable)
    for task_id, (number, record) in zip(ids, readable, strict=True):
        if task_id not in known:
            result.without_task += 1
            continue
        result.by_key[(task_id, "en")] = Prediction(
            task_id, "en", output=record["pred"], kind="pred", line=number
        )
    if readable and not result.by_key:
        raise InputError(
            f"none of the {len(readable)} result lines answers a task of this task set "
            "(a line finds its task by its question and gold: were the tasks curated "
            "from another TEXT-TO-OMOP file?)",
            stage="predictions",
            path=result.path,
        )
    return result


def _shape_problem(record: dict[str, Any], fmt: str) -> str | None:
    if fmt == PREDICTIONS:
        has_output, has_sql = "output" in record, "sql" in record
        if has_output and has_sql:
            return "give either 'output' or 'sql', not both"
        if not has_output and not has_sql and record.get("status") != "generation_error":
            return "no 'output' or 'sql' (only a generation_error may have neither)"
    problems = validation_errors("predictions" if fmt == PREDICTIONS else "csv_index", record)
    return "; ".join(problems) if problems else None


def _prediction(record: dict[str, Any], fmt: str, line: int, base: Path) -> Prediction:
    common = {
        "task_id": record["task_id"],
        "language": record.get("language", "en"),
        "run": record.get("run"),
        "line": line,
    }
    if fmt == CSV_INDEX:
        return Prediction(**common, kind="csv", csv=record["csv"], csv_folder=str(base.resolve()))
    kind = "sql" if "sql" in record else "output"
    return Prediction(
        **common,
        kind=kind,
        output=record.get("output"),
        sql=record.get("sql"),
        status=record.get("status"),
        context=record.get("context"),
    )
