"""The build report of a suite, as Markdown (``report.md`` beside ``report.json``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: indistinguishable neighbours listed per task in the Markdown (all are in report.json)
LISTED = 5


def report_markdown(report: Mapping[str, Any]) -> str:
    """What a person reads first: settings, variants, near-miss survival, drops, gold
    failures, and the neighbours no variant told apart (likely equivalent rewrites)."""
    s = report["near_miss_survival"]
    lines = [
        "# Test suite",
        "",
        f"Settings: {', '.join(f'{k} {v}' for k, v in sorted(report['settings'].items()))}.",
        f"Variants kept: {len(report['variants'])} of {report['candidates_tried']} candidates "
        f"tried ({len(report['candidates_rejected'])} rejected: a gold failed on them).",
        "",
        "## Near misses scored correct",
        "",
        "| | neighbours | share |",
        "|---|---:|---:|",
        f"| executed on the base database | {s['executed']} | |",
        f"| correct on the base database alone | {s['correct_on_base']} | "
        f"{100 * s['base_only']:.1f}% |",
        f"| correct with the suite | {s['correct_with_suite']} | {100 * s['with_suite']:.1f}% |",
        "",
        "| edit | run | correct on base | with the suite |",
        "|---|---:|---:|---:|",
        *(
            f"| {edit} | {e['executed']} | {e['correct_on_base']} | {e['correct_with_suite']} |"
            for edit, e in report["near_miss_survival_by_edit"].items()
        ),
        "",
        f"Golds with no row on the base database: {report['golds_empty_on_base']}, of which "
        f"{report['golds_empty_on_base_filled_by_a_variant']} return rows on some variant.",
        "",
    ]
    if report["drops"]:
        lines += ["## Tasks the suite drops (gold and reference answer differ)", ""]
        lines += [f"- `{tid}`: {why}" for tid, why in report["drops"].items()]
        lines.append("")
    if report["gold_failures_on_candidates"]:
        lines += ["## Golds that failed on a candidate (the candidate was not kept)", ""]
        for tid, errors in report["gold_failures_on_candidates"].items():
            lines.append(
                f"- `{tid}`: {errors[0]}"
                + (f" (+{len(errors) - 1} more)" if len(errors) > 1 else "")
            )
        lines.append("")
    left = [t for t in report["tasks"] if t["indistinguishable"]]
    lines += [
        "## Neighbours no variant told apart",
        "",
        f"{sum(len(t['indistinguishable']) for t in left)} neighbour(s) of {len(left)} task(s): "
        "likely rewrites that mean the same; for a person to look at.",
        "",
    ]
    for task in left:
        lines.append(f"### `{task['id']}`")
        lines.append("")
        for n in task["indistinguishable"][:LISTED]:
            lines.append(f"- {n['edit']}: `{n['sql']}`")
        if len(task["indistinguishable"]) > LISTED:
            lines.append(f"- ... {len(task['indistinguishable']) - LISTED} more in report.json")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"
