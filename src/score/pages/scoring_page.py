"""The page of one scoring run: headline figures, breakdowns, and every instance.

Built from what the run folder holds (:func:`score.scoring.run_folder.read_run`: meta,
summary, records) and, when they can be read, the tasks scored (question and gold SQL).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.pages.document import render_page
from score.pages.instance_view import instance_blocks, instance_ids, outcome_class
from score.pages.parts import bars, esc, figure, figures, meta_list, num, section, table
from score.scoring.outcomes import OUTCOMES
from score.statistics.metrics import group_order

COLUMNS = ("instance", "language", "tier", "category", "outcome", "why", "seconds")
FILTERS = (1, 2, 3, 4)  # language, tier, category, outcome
BREAKDOWN_TITLES = {
    "by_tier": "EX by tier",
    "by_category": "EX by category",
    "by_language": "EX by language",
    "by_difficulty": "EX by difficulty",
}


def headline(summary: Mapping[str, Any]) -> list[str]:
    """EX (and TS when a test suite scored the run), LF, and every RS, with intervals."""
    items = [figure("EX", summary.get("ex"), summary.get("ex_ci"))]
    if summary.get("ts") is not None:
        items.append(figure("TS", summary["ts"], summary.get("ts_ci")))
    if summary.get("lf") is not None:
        items.append(figure("LF", summary["lf"], summary.get("lf_ci")))
    rs, rs_ci = summary.get("rs") or {}, summary.get("rs_ci") or {}
    for key in sorted(rs, key=lambda k: (k == "N", float(k) if k != "N" else 0.0)):
        items.append(figure(f"RS({key})", rs[key], rs_ci.get(key), digits=2))
    return items


def breakdowns(summary: Mapping[str, Any]) -> str:
    charts = []
    for key, title in BREAKDOWN_TITLES.items():
        groups = summary.get(key) or {}
        if len(groups) < 1:
            continue
        charts.append(
            bars(
                title,
                (
                    (g, b.get("ex"), b.get("ex_ci"), f"{num(b.get('ex'))} (n {b.get('n', 0)})")
                    for g, b in sorted(groups.items(), key=lambda kv: group_order(kv[0]))
                ),
            )
        )
    return '<div class="charts">' + "".join(charts) + "</div>"


def outcome_table(summary: Mapping[str, Any]) -> str:
    counts = (summary.get("outcomes") or {}).get("counts") or {}
    total = sum(counts.values()) or 1
    rows = [(k, v, f"{100 * v / total:.1f}%") for k, v in counts.items() if v]
    rows.sort(key=lambda r: OUTCOMES.index(r[0]) if r[0] in OUTCOMES else len(OUTCOMES))
    return table(("outcome", "instances", "share"), rows, (False, True, True))


def run_summary(meta: Mapping[str, Any], summary: Mapping[str, Any]) -> str:
    facts = meta_list(
        {
            "run": summary.get("run") or meta.get("run"),
            "instances": summary.get("n_instances"),
            "profile": meta.get("profile"),
            "split": (meta.get("split") or {}).get("name")
            if isinstance(meta.get("split"), dict)
            else meta.get("split"),
            "engine": meta.get("engine"),
            "database": meta.get("database"),
            "predictions": meta.get("predictions"),
        }
    )
    warnings = summary.get("warnings") or []
    warned = "<ul>" + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>" if warnings else ""
    return (
        facts
        + warned
        + section("Scores", figures(headline(summary)))
        + section("Breakdown", breakdowns(summary))
        + section("Outcomes", outcome_table(summary))
    )


def instance_rows(
    records: Sequence[Mapping[str, Any]],
    tasks: Mapping[str, Mapping[str, Any]] | None,
    dialect: str | None,
) -> list[dict[str, Any]]:
    """The table's rows: cells in :data:`COLUMNS` order, and the blocks each opens to."""
    rows = []
    for rid, r in zip(instance_ids(records), records, strict=True):
        task = (tasks or {}).get(r["task_id"])
        seconds = (r.get("timings") or {}).get("total_s")
        rows.append(
            {
                "id": rid,
                **({} if rid == r["task_id"] else {"task": r["task_id"]}),
                "cls": outcome_class(r.get("outcome")),
                "c": [
                    rid,
                    r["language"],
                    r.get("tier"),
                    r.get("category"),
                    r.get("outcome"),
                    r.get("reason") or "",
                    None if seconds is None else round(seconds, 3),
                ],
                "d": instance_blocks(r, task, dialect),
            }
        )
    return rows


def table_data(rows: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return {
        "kind": kind,
        "columns": [{"key": c, "label": c} for c in COLUMNS],
        "filters": list(FILTERS),
        "rows": rows,
    }


def scoring_page(
    run: Mapping[str, Any], tasks: Mapping[str, Mapping[str, Any]] | None = None
) -> str:
    """The page of a finished run (``read_run``'s dict); ``tasks`` by id, when known."""
    meta, summary = run["meta"], run["summary"]
    dialect = meta.get("prediction_dialect")
    rows = instance_rows(run["records"], tasks, dialect)
    note = "" if tasks else '<p class="note">The task file was not at hand: no gold SQL.</p>'
    title = f"sqlgold run {summary.get('run') or meta.get('run') or ''}".strip()
    return render_page(
        title, run_summary(meta, summary) + note, table_data(rows, "scoring"), "Instances"
    )
