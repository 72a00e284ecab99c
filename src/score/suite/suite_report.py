"""The build report of a suite, as Markdown (``report.md`` beside ``report.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.suite.distill import Distillation, NeighbourKey, survival
from score.suite.query_runs import SuiteTask
from score.suite.reach import GoldReach, reach
from score.suite.suite_file import Variant

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
        f"| of those, equivalent under the CDM's constraints | {s['equivalent_under_cdm']} | |",
        f"| near misses (not equivalent) correct with the suite | "
        f"{s['not_equivalent']['correct_with_suite']} of {s['not_equivalent']['executed']} | "
        f"{100 * s['not_equivalent']['with_suite']:.1f}% |",
        f"| of those, bound to the vocabulary (no variant's told them apart) | "
        f"{s.get('vocabulary_bound', 0)} | |",
        "",
        "A neighbour is equivalent when a rule of `score.suite.equivalence` shows it cannot "
        "change the result on a CDM that keeps its constraints (a required foreign key "
        "always finds its row, a primary key is unique) and no database told it apart; "
        f"{len(report['equivalence_rules']['refuted'])} neighbour(s) a rule names were told "
        "apart by some database and count as near misses.",
        "",
        "| edit | run | correct on base | with the suite | of those, equivalent |",
        "|---|---:|---:|---:|---:|",
        *(
            f"| {edit} | {e['executed']} | {e['correct_on_base']} | {e['correct_with_suite']} "
            f"| {e['equivalent_under_cdm']} |"
            for edit, e in report["near_miss_survival_by_edit"].items()
        ),
        "",
        f"Golds with no row on the base database: {report['golds_empty_on_base']}, of which "
        f"{report['golds_empty_on_base_filled_by_a_variant']} return rows on some variant.",
        "",
        *_reach_lines(report["reach"]),
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
    left = [t for t in report["tasks"] if t.get("indistinguishable")]
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
            why = f" (equivalent: {n['equivalent']})" if n.get("equivalent") else ""
            lines.append(f"- {n['edit']}{why}: `{n['sql']}`")
        if len(task["indistinguishable"]) > LISTED:
            lines.append(f"- ... {len(task['indistinguishable']) - LISTED} more in report.json")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def _reach_lines(r: Mapping[str, Any]) -> list[str]:
    lines = [
        "## Reach",
        "",
        f"Golds that return no row on the base database or any variant: "
        f"{len(r['tasks_empty_everywhere'])} of {r['tasks']} task(s), "
        f"{r['distinct_golds_empty_everywhere']} of {r['distinct_golds']} distinct gold(s). "
        "On them any answer that returns nothing scores correct: their "
        f"{r['near_misses_unjudged']} surviving near miss(es) are "
        f"{100 * r['unjudged_share']:.1f}% of the {r['near_misses']} near misses (not "
        "equivalent) that ran, and the suite cannot judge them.",
        "",
    ]
    if r["tasks_empty_everywhere"]:
        shown = r["tasks_empty_everywhere"][: LISTED * 4]
        more = len(r["tasks_empty_everywhere"]) - len(shown)
        lines += [
            "Tasks: "
            + ", ".join(f"`{t}`" for t in shown)
            + (f" and {more} more" if more else "")
            + " (all in report.json, `reach`).",
            "",
        ]
    return lines


def by_edit(found: Mapping[str, SuiteTask], distillation: Distillation) -> dict[str, Any]:
    """Near-miss survival for each edit class, with how many of its survivors are
    equivalent under the CDM's constraints (:mod:`score.suite.equivalence`)."""
    counts: dict[str, list[int]] = {}
    for tid, item in found.items():
        for i in item.ran_on_base:
            row = counts.setdefault(item.neighbours[i].edit, [0, 0, 0, 0])
            row[0] += 1
            row[1] += i in item.alive
            row[2] += (tid, i) in distillation.alive
            row[3] += (tid, i) in distillation.alive and bool(item.neighbours[i].equivalent)
    return {
        edit: {**survival(*row[:3]), "equivalent_under_cdm": row[3]}
        for edit, row in sorted(counts.items())
    }


def equivalence_counts(
    found: Mapping[str, SuiteTask], distillation: Distillation
) -> tuple[int, int, list[dict[str, str]]]:
    """Neighbours an equivalence rule names: how many ran on the base database, how many
    no database told apart (equivalent rewrites, not near misses), and those some
    database did tell apart (the rule does not hold on that data: they stay near misses)."""
    ran, kept, refuted = 0, 0, []
    for tid, item in found.items():
        for i in item.ran_on_base:
            n = item.neighbours[i]
            if not n.equivalent:
                continue
            ran += 1
            if (tid, i) in distillation.alive:
                kept += 1
            else:
                refuted.append({"task": tid, "rule": n.equivalent, "sql": n.sql})
    return ran, kept, refuted


def build_report(
    found: Mapping[str, SuiteTask],
    distillation: Distillation,
    alive: set[NeighbourKey],
    gold_failures: Mapping[str, list[str]],
    drops: Mapping[str, str],
    variants: Sequence[Variant],
    settings: Mapping[str, Any],
    tried: int,
    bound: set[NeighbourKey] | None = None,
    same_gold: Mapping[str, Sequence[str]] | None = None,
) -> dict[str, Any]:
    """The build report; ``bound``: the surviving near misses that are vocabulary-bound
    (:mod:`score.suite.vocabulary_bound`); ``same_gold``: the tasks (beside the one in
    ``found``) that ask the same gold, which the build ran once.  Near misses are counted
    once per gold."""
    bound = bound or set()
    same_gold = same_gold or {}
    executed = sum(len(i.ran_on_base) for i in found.values())
    per_task = []
    for tid, item in found.items():
        survivors = sorted(k for t, k in distillation.alive if t == tid)
        killed = {str(k): by for (t, k), by in sorted(distillation.killed_by.items()) if t == tid}
        per_task.append(
            {
                "id": tid,
                "neighbours": len(item.neighbours),
                "ran_on_base": len(item.ran_on_base),
                "correct_on_base": len(item.alive),
                "gold_rows_on_base": item.gold_base.num_rows,
                "gold_rows_on_variants": list(item.rows_on_variants),
                "killed_by": {item.neighbours[int(k)].sql: by for k, by in killed.items()},
                "indistinguishable": [
                    {
                        "edit": item.neighbours[k].edit,
                        "sql": item.neighbours[k].sql,
                        **(
                            {"equivalent": item.neighbours[k].equivalent}
                            if item.neighbours[k].equivalent
                            else {}
                        ),
                        **({"vocabulary_bound": True} if (tid, k) in bound else {}),
                    }
                    for k in survivors
                ],
            }
        )
        per_task += [{"id": other, "same_gold_as": tid} for other in same_gold.get(tid, ())]
    ran_eq, equivalent, refuted = equivalence_counts(found, distillation)
    after = len(distillation.alive)
    reached = reach(
        _gold_reach(tid, item, distillation, same_gold.get(tid, ())) for tid, item in found.items()
    )

    return {
        "settings": dict(settings),
        "variants": [{"name": v.name, "rows": dict(sorted(v.rows.items()))} for v in variants],
        "candidates_tried": tried,
        "candidates_rejected": dict(sorted(distillation.rejected.items())),
        "gold_failures_on_candidates": {t: list(x) for t, x in sorted(gold_failures.items())},
        "drops": dict(sorted(drops.items())),
        "near_miss_survival": {
            **survival(executed, len(alive), after),
            "equivalent_under_cdm": equivalent,
            "not_equivalent": dict(
                survival(executed - equivalent, len(alive) - equivalent, after - equivalent)
            ),
            "vocabulary_bound": len(bound),
        },
        "equivalence_rules": {"ran": ran_eq, "held": equivalent, "refuted": refuted},
        "near_miss_survival_by_edit": by_edit(found, distillation),
        "golds_empty_on_base": sum(1 for i in found.values() if i.gold_base.num_rows == 0),
        "golds_empty_on_base_filled_by_a_variant": sum(
            1 for i in found.values() if i.gold_base.num_rows == 0 and any(i.rows_on_variants)
        ),
        "reach": reached,
        "tasks": per_task,
    }


def _gold_reach(
    tid: str, item: SuiteTask, distillation: Distillation, others: Sequence[str]
) -> GoldReach:
    near = [i for i in item.ran_on_base if not item.neighbours[i].equivalent]
    return GoldReach(
        (tid, *others),
        item.task["gold_sql"],
        item.gold_base.num_rows,
        tuple(item.rows_on_variants),
        len(near),
        sum(1 for i in near if (tid, i) in distillation.alive),
    )
