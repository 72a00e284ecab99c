"""The page of two runs compared: their figures side by side, the paired test, and the
instances one run got right and the other did not (each opening to both answers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from score.pages.document import render_page
from score.pages.instance_view import instance_blocks, instance_ids
from score.pages.parts import esc, num, section, table
from score.report.markdown import score_rows
from score.statistics.metrics import group_order, is_right
from score.statistics.stats import pair_instances

COLUMNS = ("instance", "language", "tier", "which", "outcome A", "outcome B")
FILTERS = (1, 2, 3)
A_ONLY, B_ONLY = "right in A, wrong in B", "wrong in A, right in B"


def _score_rows(scores: Mapping[str, Any]) -> list[tuple]:
    """Each score compared, named as report.md names it (EX, RS(5), Cut off ...), not by
    its key in comparison.json."""
    rows = []
    rs_keys = list(scores.get("rs") or {})
    for label, path, digits in score_rows(rs_keys, suite="ts" in scores):
        entry: Any = scores
        for key in path:
            entry = entry.get(key) if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping) or "diff" not in entry:
            continue
        ci = entry.get("ci")
        rows.append(
            (
                label,
                num(entry.get("a"), digits),
                num(entry.get("b"), digits),
                num(entry.get("diff"), digits),
                "-" if not ci else f"{num(ci[0], digits)} to {num(ci[1], digits)}",
            )
        )
    return rows


def compare_summary(
    a: Mapping[str, Any], b: Mapping[str, Any], comparison: Mapping[str, Any]
) -> str:
    label_a = comparison.get("run_a") or a["meta"].get("run")
    label_b = comparison.get("run_b") or b["meta"].get("run")
    runs = table(
        ("", "run", "instances", "EX"),
        [
            ("A", label_a, a["summary"].get("n_instances"), num(a["summary"].get("ex"))),
            ("B", label_b, b["summary"].get("n_instances"), num(b["summary"].get("ex"))),
        ],
        (False, False, True, True),
    )
    test = (
        f"<p>{esc(comparison.get('test'))}: b (A right, B wrong) = {esc(comparison.get('b'))}, "
        f"c (A wrong, B right) = {esc(comparison.get('c'))}, "
        f"p = {esc(format(comparison.get('p_value', float('nan')), '.4g'))} "
        f"over {esc(comparison.get('n'))} paired instances "
        f"({esc(comparison.get('n_gold_error_excluded', 0))} left out: gold error).</p>"
    )
    scores = table(
        ("score", "A", "B", "A - B", "95% CI of A - B"),
        _score_rows(comparison.get("scores") or {}),
        (False, True, True, True, False),
    )
    tiers = table(
        ("tier", "n", "b", "c", "p"),
        [
            (t, blk.get("n"), blk.get("b"), blk.get("c"), format(blk.get("p_value", 0.0), ".4g"))
            for t, blk in sorted(
                (comparison.get("by_tier") or {}).items(), key=lambda kv: group_order(kv[0])
            )
        ],
        (False, True, True, True, True),
    )
    return section("Runs", runs) + section("Paired test", test + scores) + section("By tier", tiers)


def discordant_rows(
    a: Mapping[str, Any], b: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]] | None
) -> list[dict[str, Any]]:
    recs_a, recs_b, _ = pair_instances(a["records"], b["records"])
    rows = []
    for rid, ra, rb in zip(instance_ids(recs_a), recs_a, recs_b, strict=True):
        right_a, right_b = is_right(ra), is_right(rb)
        if right_a == right_b:
            continue
        task = (tasks or {}).get(ra["task_id"])
        blocks = (
            [{"t": "h", "text": "A: " + str(a["meta"].get("run"))}]
            + instance_blocks(ra, task, a["meta"].get("prediction_dialect"), row_facts=True)
            + [{"t": "h", "text": "B: " + str(b["meta"].get("run"))}]
            + instance_blocks(rb, task, b["meta"].get("prediction_dialect"), row_facts=True)
        )
        rows.append(
            {
                "id": rid,
                **({} if rid == ra["task_id"] else {"task": ra["task_id"]}),
                "cls": "right" if right_b else "wrong",
                "c": [
                    rid,
                    ra["language"],
                    ra.get("tier"),
                    A_ONLY if right_a else B_ONLY,
                    ra.get("outcome"),
                    rb.get("outcome"),
                ],
                "d": blocks,
            }
        )
    return rows


def compare_page(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    comparison: Mapping[str, Any],
    tasks: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """The page of run ``a`` against run ``b`` (``read_run`` dicts) and their comparison."""
    rows = discordant_rows(a, b, tasks)
    data = {
        "kind": "compare",
        "columns": [{"key": c.replace(" ", "_"), "label": c} for c in COLUMNS],
        "filters": list(FILTERS),
        "rows": rows,
    }
    title = f"sqlgold compare {a['meta'].get('run')} vs {b['meta'].get('run')}"
    return render_page(title, compare_summary(a, b, comparison), data, "Discordant instances")
