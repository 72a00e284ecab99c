"""One scored instance as the page opens it: the blocks its detail shows.

A block is a small dict the page's script draws (``t`` names its kind): ``kv`` facts,
``text``, ``sql`` (highlighted by the script; with ``fmt`` a one-line text is laid out
one clause a line there: sqlglot's formatter would cost a run more than the 5% a page
may add, and a prediction's error positions refer to its text as written), ``rows`` (a result's
first rows, with the rows that differ marked), ``diff`` (the differing rows as
``-``/``+`` lines) and ``side`` (blocks side by side).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

#: the model's raw output is shown (cut to this) when no SQL was taken from it
OUTPUT_SHOWN = 4000
RIGHT = frozenset({"correct"})
EXCLUDED = frozenset({"gold_error", "gold_drift"})


def instance_ids(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each record's id on the page: its task id, with ``.language`` when the task was
    scored in several languages (``report.html#omop-042`` opens the first of them)."""
    per_task = Counter(r["task_id"] for r in records)
    return [
        r["task_id"] if per_task[r["task_id"]] == 1 else f"{r['task_id']}.{r['language']}"
        for r in records
    ]


def outcome_class(outcome: str | None) -> str:
    if outcome in RIGHT:
        return "right"
    return "excluded" if outcome in EXCLUDED else "wrong"


def _rows_block(
    label: str, side: Mapping[str, Any], marked: list, cls: str, colmark: list | None
) -> dict[str, Any]:
    block = {
        "t": "rows",
        "label": label,
        "columns": side["columns"],
        "rows": side["rows"],
        "total": side["total"],
        "mark": marked,
        "markClass": cls,
    }
    if side.get("total_columns"):
        block["hiddenColumns"] = side["total_columns"] - len(side["columns"])
    if colmark and any(colmark):
        block["colmark"] = colmark
    return block


def _column_marks(preview: Mapping[str, Any]) -> tuple[list | None, list | None]:
    """Notes on gold and predicted columns: renamed, partly equal, or without partner."""
    links = preview.get("columns")
    if not links or "gold" not in preview or "predicted" not in preview:
        return None, None
    gold_cols, pred_cols = preview["gold"]["columns"], preview["predicted"]["columns"]
    gold_mark = ["" for _ in gold_cols]
    pred_mark = ["not in the gold" for _ in pred_cols]
    for i, (_, pred_name, how) in enumerate(links):
        note = {"same": "", "renamed": "renamed", "partial": "partly equal"}.get(how, how)
        if i < len(gold_mark):
            gold_mark[i] = "no partner" if pred_name is None else note
        if pred_name is not None and pred_name in pred_cols:
            pred_mark[pred_cols.index(pred_name)] = note
    return gold_mark, pred_mark


def preview_blocks(
    preview: Mapping[str, Any] | None, other: str = "predicted", missing_from: str = "prediction"
) -> list[dict[str, Any]]:
    """Both results' first rows side by side and the rows that differ; ``other`` names
    the result compared with the gold (a prediction's, or a reference answer's)."""
    if not preview:
        return []
    gold_mark, pred_mark = _column_marks(preview)
    sides = []
    if "predicted" in preview:
        sides.append(
            _rows_block(
                f"{other} result",
                preview["predicted"],
                preview.get("extra", []),
                "extra",
                pred_mark,
            )
        )
    if "gold" in preview:
        sides.append(
            _rows_block(
                "gold result", preview["gold"], preview.get("missing", []), "missing", gold_mark
            )
        )
    blocks: list[dict[str, Any]] = [{"t": "side", "items": sides}] if sides else []
    lines = []
    for key, sign, what in (("missing", "-", "gold"), ("extra", "+", other)):
        rows, count = preview.get(key, []), preview.get(f"{key}_count", 0)
        lines += [f"{sign} ({', '.join(r)})" for r in rows]
        if count > len(rows):
            lines.append(f"  … {count - len(rows)} more {what} row(s) not shown")
    if lines:
        head = (
            f"  -{preview.get('missing_count', 0)} gold row(s) missing from the {missing_from}, "
            f"+{preview.get('extra_count', 0)} {other} row(s) not in the gold"
        )
        blocks.append({"t": "diff", "label": "rows that differ", "lines": [head, *lines]})
    elif preview.get("out_of_order_row"):
        blocks.append(
            {
                "t": "text",
                "label": "rows that differ",
                "text": f"same rows in another order, from row {preview['out_of_order_row']}",
            }
        )
    return blocks


def _timings(timings: Mapping[str, Any] | None) -> str:
    if not timings:
        return "-"
    return ", ".join(
        f"{k.removesuffix('_s')} {v:.3f} s" for k, v in sorted(timings.items()) if v is not None
    )


def instance_blocks(
    record: Mapping[str, Any],
    task: Mapping[str, Any] | None,
    dialect: str | None,
    *,
    row_facts: bool = False,
) -> list[dict[str, Any]]:
    """What opening ``record`` shows; ``task`` (its task, when known) adds the question
    and the gold SQL; ``dialect`` is the predictions' SQL dialect.  ``row_facts`` also
    lists what the table's row holds (its outcome, reason and so on), for a page whose
    row is not the record's own (a comparison opens two records from one row)."""
    facts = []
    if row_facts:
        facts += [
            ["outcome", record.get("outcome") or "-"],
            ["why", record.get("reason") or "-"],
        ]
    cause = record.get("mismatch_cause")
    if cause:
        facts.append(["mismatch cause", f"{cause['name']}: {cause['detail']}"])
    facts.append(["time", _timings(record.get("timings"))])
    suite = record.get("suite")
    if suite:
        where = suite["told_apart_by"]
        said = f"told apart by variant {where}: " if where else ""
        facts.append(["test suite", f"{said}{suite['reason']}"])
    if record.get("extracted_by"):
        facts.append(["SQL taken from the output by", record["extracted_by"]])
    if record.get("lf_match") is not None:
        facts.append(["logical form matches the gold", "yes" if record["lf_match"] else "no"])
    blocks: list[dict[str, Any]] = [{"t": "kv", "items": facts}]
    if task is not None:
        question = (task.get("questions") or {}).get(record["language"]) or task.get("question")
        if question:
            blocks.append({"t": "text", "label": "question", "text": question})
    sql = record.get("sql") or record.get("executed_sql")
    if sql:
        label = f"prediction ({dialect})" if dialect else "prediction"
        predicted: dict[str, Any] = {"t": "sql", "label": label, "sql": sql, "fmt": 1}
    else:
        output = record.get("output")
        shown = "(no output)" if output is None else output[:OUTPUT_SHOWN]
        if output is not None and len(output) > OUTPUT_SHOWN:
            shown += f"\n… {len(output) - OUTPUT_SHOWN} more characters not shown"
        predicted = {"t": "text", "label": "model output (no SQL taken from it)", "text": shown}
    sides = [predicted]
    if task is not None and task.get("gold_sql"):
        sides.append({"t": "sql", "label": "gold", "sql": task["gold_sql"], "fmt": 1})
    elif task is not None and not task.get("answerable", True):
        sides.append(
            {
                "t": "text",
                "label": "gold",
                "text": task.get("unanswerable_because") or "unanswerable",
            }
        )
    blocks.append({"t": "side", "items": sides})
    return blocks + preview_blocks(record.get("preview"))
