"""TEXT-TO-OMOP's metrics of a scored run (profile ``text2omop``): the I/O edge around
:func:`score.statistics.text2omop_metrics.text2omop_metrics`.

Its evaluator runs the gold of every answerable question, the ones the model declined
too, and leaves out of its execution metrics those whose gold fails; sqlgold does not run
a gold it needs no result of (after an abstention, or an answer that failed before it
ran).  So an item's gold status is read from its outcome where the outcome says it
(``correct`` and ``mismatch``: the gold ran; ``gold_error``: it failed; ``gold_drift``:
it is not the result the task was verified with, left out as sqlgold leaves it out
everywhere); an item no prediction answers takes its task's pin as standing (its gold is
not run: a verified task's gold runs), and otherwise the gold is run (through the gold
cache, checked against its pin).

Each item's texts, for EM, EMN and ROUGE-L:

* the gold's: the task's source SQL as written (TEXT-TO-OMOP's PostgreSQL gold), or
  ``<NO_SQL>`` for an unanswerable task;
* the prediction's: its text as given (a TEXT-TO-OMOP ``pred``, or a predictions file's
  raw ``output``), else the SQL scored; ``<NO_SQL>`` for an abstention; and for an
  instance with no prediction, the empty text: an answer that fails to run, as the
  evaluator takes an empty ``pred`` (it would not see the item at all).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from score.execution.result import QueryError
from score.inputs.text2omop import NO_SQL
from score.scoring.gold_cache import GoldCache
from score.scoring.gold_pin import GoldPins, pinned_hash, task_today
from score.scoring.outcomes import Outcome
from score.statistics.text2omop_metrics import Item, text2omop_metrics

_GOLD_RAN = frozenset({Outcome.CORRECT, Outcome.MISMATCH})
_GOLD_LEFT_OUT = frozenset({Outcome.GOLD_ERROR, Outcome.GOLD_DRIFT})


def pred_text(record: Mapping[str, Any]) -> str:
    """The prediction's text as the metrics read it (see the module's text)."""
    output = record.get("output")
    if record["outcome"] == Outcome.ABSTAINED:
        given = output if isinstance(output, str) else ""
        return given if given.strip() == NO_SQL else NO_SQL
    if isinstance(output, str):
        return output
    return record.get("sql") or ""


def gold_text(task: Mapping[str, Any]) -> str:
    if not task["answerable"]:
        return NO_SQL
    return task.get("source_sql") or task["gold_sql"]


def gold_runs(
    record: Mapping[str, Any], task: Mapping[str, Any], gold: GoldCache, pins: GoldPins
) -> bool:
    """Whether the task's gold runs here and gives the result it was verified with."""
    if not task["answerable"] or record["outcome"] in _GOLD_RAN:
        return True
    if record["outcome"] in _GOLD_LEFT_OUT:
        return False
    if record["outcome"] == Outcome.MISSING and pinned_hash(task) is not None:
        return True  # no prediction needs it: the result it was verified with stands
    today = task_today(task)
    result = gold.result(task["gold_sql"], today=today)
    if isinstance(result, QueryError):
        return False
    return pins.drift(task, result, gold.key(task["gold_sql"], today)) is None


def text2omop_summary(
    records: Iterable[Mapping[str, Any]],
    tasks: Mapping[str, Mapping[str, Any]],
    gold: GoldCache,
    pins: GoldPins | None = None,
) -> dict[str, Any]:
    """TEXT-TO-OMOP's metrics over the scored instances (task id -> task in ``tasks``)."""
    pins = pins or GoldPins()
    items = []
    for record in records:
        task = tasks[record["task_id"]]
        runs = gold_runs(record, task, gold, pins)
        items.append(Item(gold_text(task), pred_text(record), runs, str(record["outcome"])))
    return text2omop_metrics(items)
