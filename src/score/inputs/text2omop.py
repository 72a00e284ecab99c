"""TEXT-TO-OMOP's files: its test set's items, its result files' lines, and their ids.

TEXT-TO-OMOP (Legrand et al., "An OMOP-Based Open-Source Text-to-SQL Benchmark
Dataset", ClinicalNLP 2026; repository red1dwarf/TEXT-TO-OMOP, commit f5c858f) ships its
items as JSONL, ``{"input": question, "output": gold}``, and its models' predictions as
result files, ``{"input": question, "gold": gold, "pred": prediction}``, one per line.
A gold or a prediction is PostgreSQL SQL, or exactly ``<NO_SQL>`` for a question the
database cannot answer (for a prediction: the model abstains).

Both sides of sqlgold read them through this module, so a result file finds the tasks
its test set was curated into:

* :func:`item_ids`: an item's task id is made from its content, the stripped question
  and gold (``text2omop/`` and the first 12 hex digits of their sha256), so it does not
  change when lines are reordered or others added; the same question and gold repeated
  are kept apart by their order (``-2``, ``-3``, ... from the second on).  Its inference
  scripts strip both fields before writing them back, so a result line's ``input`` and
  ``gold`` give the id of the item it answers.
* :func:`evaluated_pred`: a ``pred`` as its evaluator (``EVALUATION/evaluation_protocol.py``
  at f5c858f) uses it: stripped, ``<NO_SQL>`` an abstention, anything else an answer
  that is run with one final ``;`` removed.  Its inference scripts turn an empty
  generation into ``<NO_SQL>``, but its evaluator takes an empty ``pred`` as an answer
  whose execution fails ("Empty SQL"): sqlgold follows the evaluator.

>>> item_ids([("Q?", "SELECT 1;"), ("Q?", "SELECT 1;"), ("Q?", "<NO_SQL>")])
['text2omop/acb9712737d0', 'text2omop/acb9712737d0-2', 'text2omop/abbe952bdaf8']
>>> evaluated_pred("  SELECT 1;  "), evaluated_pred("<NO_SQL>"), evaluated_pred("")
('SELECT 1', None, '')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

#: The gold of an unanswerable item, and the prediction that abstains.
NO_SQL = "<NO_SQL>"

#: Prefix of every TEXT-TO-OMOP task id.
ID_PREFIX = "text2omop/"

#: The fields of a line of its test set, and of a line of its result files.
ITEM_FIELDS = ("input", "output")
RESULT_FIELDS = ("input", "gold", "pred")

#: The SQL dialect of its golds and predictions.
DIALECT = "postgres"


def content_id(question: str, gold: str) -> str:
    """The id of an item with this (stripped) question and gold, before repeats are told
    apart.

    >>> content_id(" Q? ", "SELECT 1;") == content_id("Q?", "SELECT 1;")
    True
    """
    digest = hashlib.sha256(f"{question.strip()}\x1f{gold.strip()}".encode()).hexdigest()
    return ID_PREFIX + digest[:12]


def item_ids(items: Iterable[tuple[str, str]]) -> list[str]:
    """The task id of each (question, gold) pair, in order: its :func:`content_id`, with
    ``-2``, ``-3``, ... on the second and later occurrences of the same pair."""
    seen: dict[str, int] = {}
    out = []
    for question, gold in items:
        base = content_id(question, gold)
        seen[base] = seen.get(base, 0) + 1
        out.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return out


def is_result_line(record: Mapping[str, Any]) -> bool:
    """Whether a decoded line is a result file's (it has ``input``, ``gold`` and ``pred``).

    >>> is_result_line({"input": "Q?", "gold": "<NO_SQL>", "pred": "<NO_SQL>"})
    True
    >>> is_result_line({"task_id": "q1", "output": "SELECT 1"})
    False
    """
    return all(name in record for name in RESULT_FIELDS)


def field_problem(record: Mapping[str, Any], fields: Iterable[str]) -> str | None:
    """Why a line cannot be read (a field missing or not a string), or None.

    >>> field_problem({"input": "Q?", "gold": None, "pred": ""}, RESULT_FIELDS)
    "'gold' is not a string (null)"
    """
    for name in fields:
        if name not in record:
            return f"no field {name!r}"
        value = record[name]
        if not isinstance(value, str):
            shown = "null" if value is None else type(value).__name__
            return f"{name!r} is not a string ({shown})"
    return None


def evaluated_pred(pred: str) -> str | None:
    """The SQL its evaluator runs for ``pred``: None when the model abstains
    (``<NO_SQL>``, surrounding space ignored), else the stripped text less one final
    ``;`` (empty when nothing is left, which the evaluator counts as a failed execution).
    """
    text = pred.strip()
    if text == NO_SQL:
        return None
    return text[:-1] if text.endswith(";") else text
