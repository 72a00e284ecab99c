"""How a task record is a row of the published Parquet files, and back.

Files are written through ``datasets`` (:func:`write_parquet`), so the feature types
travel in each file's ``huggingface`` schema metadata and ``load_dataset`` gives back
exactly these types.  Every task field keeps its name:

* strings, booleans and integers (int64) map to themselves; nullable fields are
  nullable columns; ``tier`` and the other labels stay plain strings (no ClassLabel);
* ``questions`` (language -> text, languages varying per task) is a list of
  ``{language, text}`` structs sorted by language; ``{q["language"]: q["text"] for q
  in row["questions"]}`` gives the task file's object back;
* ``features`` is a struct with one field per key the task schema defines; a key the
  task leaves out is null (the reverse mapping drops null keys).  A key the published
  schema does not know is refused rather than dropped;
* ``unanswerable_because`` is a nullable struct of two string lists, same rule for
  absent keys; ``gold_result`` a nullable struct ``{sha256, rows, columns, types}``;
* ``today`` (the day the gold was verified under) is a nullable ``YYYY-MM-DD`` string;
* ``origin`` and ``notes`` are nullable strings: a task file that leaves them out
  loads as null;
* ``alternative_golds`` (task format 1.2) is a nullable list of structs
  ``{gold_sql, source_sql, source_dialect, transpile_rules, gold_result}``; a task
  without alternatives (format 1.1) is null there and loads back without the key.

:func:`task_to_row` and :func:`row_to_task` are the two directions;
``row_to_task(task_to_row(t))`` equals ``t`` for any valid task that has ``origin``
and ``notes``.  The ``database`` config's rows are
``{table, column, type, rows}`` (strings and an int64).

>>> task = {"id": "q1", "questions": {"ko": "질문", "en": "Q"}, "features": {"join_count": 0},
...         "unanswerable_because": None, "gold_result": None, "origin": None, "notes": None}
>>> row = task_to_row(task)
>>> row["questions"]
[{'language': 'en', 'text': 'Q'}, {'language': 'ko', 'text': '질문'}]
>>> nulls = {k: None for k in task_features() if k != "alternative_golds"}
>>> row_to_task(row) == {**nulls, **task}
True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path
from typing import Any

from score.errors import SqlgoldError

STAGE = "publish"


def fail(message: str, **where: Any) -> SqlgoldError:
    return SqlgoldError(message, stage=STAGE, **where)


def _features():
    from datasets import Features, List, Value

    string = Value("string")
    int64 = Value("int64")
    boolean = Value("bool")
    strings = List(string)
    task_features = {
        "tables": strings,
        "join_count": int64,
        "aggregates": strings,
        "window_functions": int64,
        "set_operations": strings,
        "subqueries": int64,
        "ctes": int64,
        "nesting_depth": int64,
        "has_order_by": boolean,
        "has_limit": boolean,
        "has_distinct": boolean,
        "has_group_by": boolean,
    }
    tasks = Features(
        {
            "schema_version": string,
            "id": string,
            "question": string,
            "questions": List({"language": string, "text": string}),
            "gold_sql": string,
            "source_sql": string,
            "source_dialect": string,
            "answer_sql": string,
            "answer_dialect": string,
            "tier": string,
            "features": task_features,
            "category": string,
            "difficulty": string,
            "answerable": boolean,
            "order_matters": boolean,
            "unanswerable_because": {"empty_tables": strings, "null_columns": strings},
            "gold_result": {
                "sha256": string,
                "rows": int64,
                "columns": strings,
                "types": strings,
            },
            "today": string,
            "transpile_rules": strings,
            "alternative_golds": List(
                {
                    "gold_sql": string,
                    "source_sql": string,
                    "source_dialect": string,
                    "transpile_rules": strings,
                    "gold_result": {
                        "sha256": string,
                        "rows": int64,
                        "columns": strings,
                        "types": strings,
                    },
                }
            ),
            "origin": string,
            "notes": string,
        }
    )
    database = Features({"table": string, "column": string, "type": string, "rows": int64})
    return tasks, database


@cache
def task_features():
    """The ``datasets.Features`` of the ``tasks`` config."""
    return _features()[0]


@cache
def database_features():
    """The ``datasets.Features`` of the ``database`` config."""
    return _features()[1]


def _struct(value: Mapping[str, Any] | None, keys: Sequence[str], what: str, task_id: str):
    if value is None:
        return None
    unknown = sorted(set(value) - set(keys))
    if unknown:
        raise fail(
            f"{what} has keys the published schema does not know: {', '.join(unknown)} "
            f"(add them to curate.publish.release's features first)",
            task_id=task_id,
        )
    return {k: value.get(k) for k in keys}


def task_to_row(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task record as a row of the ``tasks`` config (see the module docstring).

    >>> row = task_to_row({"id": "q1", "questions": {"ko": "질문", "en": "Q"},
    ...                    "features": {"join_count": 0}, "unanswerable_because": None})
    >>> row["questions"]
    [{'language': 'en', 'text': 'Q'}, {'language': 'ko', 'text': '질문'}]
    >>> row["features"]["join_count"], row["features"]["tables"], row["notes"]
    (0, None, None)
    """
    feats = task_features()
    task_id = task.get("id", "?")
    row = {name: task.get(name) for name in feats}
    row["questions"] = [
        {"language": lang, "text": text} for lang, text in sorted(task["questions"].items())
    ]
    row["features"] = _struct(
        task.get("features") or {}, list(feats["features"]), "features", task_id
    )
    row["unanswerable_because"] = _struct(
        task.get("unanswerable_because"),
        list(feats["unanswerable_because"]),
        "unanswerable_because",
        task_id,
    )
    row["gold_result"] = _struct(
        task.get("gold_result"), list(feats["gold_result"]), "gold_result", task_id
    )
    unknown = sorted(set(task) - set(feats))
    if unknown:
        raise fail(f"task fields the published schema does not know: {unknown}", task_id=task_id)
    return row


def _drop_nulls(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if value is None else {k: v for k, v in value.items() if v is not None}


def row_to_task(row: Mapping[str, Any]) -> dict[str, Any]:
    """A row of the ``tasks`` config back as a task record (keys sorted).

    >>> t = {"id": "q1", "questions": {"en": "Q", "ko": "질문"}, "features": {"join_count": 0},
    ...      "unanswerable_because": None, "gold_result": None, "origin": None, "notes": None}
    >>> back = row_to_task(task_to_row(t))
    >>> back["questions"], back["features"], back["gold_sql"]
    ({'en': 'Q', 'ko': '질문'}, {'join_count': 0}, None)
    """
    task = dict(row)
    if not task.get("alternative_golds"):  # a task of format 1.1 has no such key
        task.pop("alternative_golds", None)
    task["questions"] = {q["language"]: q["text"] for q in row["questions"]}
    task["features"] = _drop_nulls(row.get("features")) or {}
    task["unanswerable_because"] = _drop_nulls(row.get("unanswerable_because"))
    return dict(sorted(task.items()))


@contextmanager
def _quiet_datasets() -> Iterator[None]:
    from datasets.utils.tqdm import (
        are_progress_bars_disabled,
        disable_progress_bars,
        enable_progress_bars,
    )

    was_disabled = are_progress_bars_disabled()
    disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            enable_progress_bars()


def write_parquet(rows: Sequence[Mapping[str, Any]], features: Any, path: Path) -> int:
    """Write rows through ``datasets`` (features in the schema metadata); the Arrow size."""
    from datasets import Dataset

    columns = {name: [r[name] for r in rows] for name in features}
    dataset = Dataset.from_dict(columns, features=features)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _quiet_datasets():
        dataset.to_parquet(str(path))
    return dataset.data.nbytes


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a Parquet file as Python objects (structs as dicts, lists as lists)."""
    import pyarrow.parquet as pq  # only a release folder needs it: a task file's run does not

    return pq.read_table(path).to_pylist()
