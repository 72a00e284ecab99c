"""The curation report: what was kept, what was dropped and why (JSON and Markdown).

The JSON report is read by scripts, so its names are stable: ``records`` holds one
entry per source record with ``id``, ``status`` (``kept`` or ``dropped``) and, for a
drop, ``stage``, ``rule`` and ``reason``.  The header names the database fingerprint
and the sqlglot / duckdb versions.  No timestamps: the same inputs give the same bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import Any

from curate.sources.records import SourceProblem
from curate.tasks.verdict import Verdict
from curate.verify.identical_results import result_groups

REPORT_FORMAT = "sqlgold.curation-report/1"
TIER_ORDER = ("simple", "compositional", "schema_aware", "unanswerable")


#: The key of the records a count has no value for (e.g. tasks without a category).
NO_VALUE = "(none)"


def _sorted_counts(counter: Counter) -> dict[str, int]:
    """Counts by text key, sorted, the records without a value last under ``(none)``
    (JSON keys are text: a None among them cannot be sorted or written).

    >>> _sorted_counts(Counter(["b", None, "a", "b"]))
    {'a': 1, 'b': 2, '(none)': 1}
    """
    keys = sorted(counter, key=lambda k: (k is None, str(k)))
    return {NO_VALUE if k is None else str(k): counter[k] for k in keys}


def build_report(
    *,
    name: str,
    header: dict[str, Any],
    tasks: Sequence[dict[str, Any]],
    verdicts: Sequence[Verdict],
    problems: Sequence[SourceProblem],
) -> dict[str, Any]:
    """The JSON report.  ``header`` carries source, database, versions and settings.

    Import problems that name a record id become dropped records (stage ``import``);
    the others (a file with no readable record) are listed under ``problems``.
    """
    records = [v.to_dict() for v in verdicts]
    loose: list[dict[str, Any]] = []
    by_id: dict[str, list[SourceProblem]] = {}
    for p in problems:
        if p.task_id:
            by_id.setdefault(p.task_id, []).append(p)
        else:
            loose.append({"reason": p.reason, "message": p.message, "path": p.path, "line": p.line})
    for task_id, found in by_id.items():  # one entry per record, however many problems
        records.append(
            {
                "id": task_id,
                "status": "dropped",
                "stage": "import",
                "rule": found[0].reason,
                "reason": "; ".join(p.message for p in found),
            }
        )
    records.sort(key=lambda r: (r["id"], r["status"]))
    groups = result_groups(
        (v.id, v.result.sha256, v.result.rows, v.result.head)
        for v in verdicts
        if v.status == "kept" and v.result is not None
    )
    dropped = [r for r in records if r["status"] == "dropped"]
    by_tier = Counter(t["tier"] for t in tasks)
    counts = {
        "records": len(records),
        "kept": len(tasks),
        "dropped": len(dropped),
        "by_tier": {t: by_tier.get(t, 0) for t in TIER_ORDER},
        "by_category": _sorted_counts(Counter(t.get("category") for t in tasks)),
        "by_difficulty": _sorted_counts(Counter(t.get("difficulty") for t in tasks)),
        "languages": _sorted_counts(Counter(lang for t in tasks for lang in t["questions"])),
        "answerable": sum(1 for t in tasks if t["answerable"]),
        "unanswerable": sum(1 for t in tasks if not t["answerable"]),
        "kept_with_warnings": sum(1 for r in records if r.get("warnings")),
        "identical_result_groups": len(groups),
        "kept_in_identical_result_groups": sum(len(g.ids) for g in groups),
        "smells_by_rule": _sorted_counts(
            Counter(s["rule"] for r in records for s in r.get("smells", ()))
        ),
        "advisories_by_rule": _sorted_counts(
            Counter(a["rule"] for r in records for a in r.get("advisories", ()))
        ),
        "dropped_by_stage": _sorted_counts(Counter(r["stage"] for r in dropped)),
        "dropped_by_rule": _sorted_counts(Counter(f"{r['stage']}/{r['rule']}" for r in dropped)),
    }
    return {
        "format": REPORT_FORMAT,
        "name": name,
        **header,
        "counts": counts,
        "records": records,
        "identical_results": [g.to_dict() for g in groups],
        "problems": loose,
    }


def report_json(report: dict[str, Any]) -> str:
    return json.dumps(report, sort_keys=True, ensure_ascii=False, indent=2) + "\n"


def _md_escape(text: str | None) -> str:
    return (text or "").replace("|", "\\|").replace("\n", " ")


def report_markdown(report: dict[str, Any]) -> str:
    """A Markdown report for people: header, counts by tier, every drop with its reason."""
    c = report["counts"]
    db = report["database"]
    v = report["versions"]
    lines = [
        f"# Curation report: {report['name']}",
        "",
        f"- source: `{report['source']}` ({report['source_format']})",
        f"- tasks: `{report['tasks_file']}`",
        f"- database: `{db['path']}`{' (' + db['engine'] + ')' if 'engine' in db else ''} "
        f"schema `{db['schema']}`, fingerprint `{db['fingerprint']}`",
        f"- versions: sqlgold {v['sqlgold']}, sqlglot {v['sqlglot']}, duckdb {v['duckdb']}",
        f"- comparator profile: `{report['comparator_profile']}`",
        f"- fixed today: {report['settings']['today'] or 'none'}",
        "",
        f"**{c['records']} records: {c['kept']} kept, {c['dropped']} dropped.**",
        "",
        "## Kept tasks by tier",
        "",
        "| tier | tasks |",
        "| --- | ---: |",
        *[f"| {t} | {n} |" for t, n in c["by_tier"].items()],
        "",
        "## Kept tasks by category",
        "",
        "| category | tasks |",
        "| --- | ---: |",
        *[f"| {k or '(none)'} | {n} |" for k, n in c["by_category"].items()],
        "",
        "Questions by language: " + ", ".join(f"{k} {n}" for k, n in c["languages"].items()),
        "",
    ]
    lines += _identical_results_markdown(report)
    if "engine_agreement" in report:
        from curate.write.engine_agreement import agreement_markdown

        lines += agreement_markdown(report["engine_agreement"])
    warned = [r for r in report["records"] if r["status"] == "kept" and r.get("warnings")]
    lines += ["## Warnings on kept tasks", ""]
    if not warned:
        lines += ["None: every kept gold's transpile warnings were settled.", ""]
    else:
        lines += ["Transpile warnings nothing settled (rule unresolved_semantics was off):", ""]
        lines += [
            f"- {_md_escape(r['id'])}: {_md_escape(w)}" for r in warned for w in r["warnings"]
        ]
        lines.append("")
    lines += _findings_markdown(report, "smells", "Gold smells on kept tasks")
    lines += _findings_markdown(report, "advisories", "OMOP advisories on kept tasks")
    dropped = [r for r in report["records"] if r["status"] == "dropped"]
    lines += ["## Dropped records", ""]
    if not dropped:
        lines += ["None.", ""]
    else:
        lines += ["| stage/rule | records |", "| --- | ---: |"]
        lines += [f"| {k} | {n} |" for k, n in c["dropped_by_rule"].items()]
        lines += ["", "| id | stage | rule | reason |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {_md_escape(r['id'])} | {r['stage']} | {r['rule']} | {_md_escape(r['reason'])} |"
            for r in dropped
        ]
        lines.append("")
    if report["problems"]:
        lines += ["## Input problems", ""]
        lines += [
            f"- {_md_escape(p['path'])}{':' + str(p['line']) if p['line'] else ''}: "
            f"{p['reason']}: {_md_escape(p['message'])}"
            for p in report["problems"]
        ]
        lines.append("")
    return "\n".join(lines)


def _findings_markdown(report: dict[str, Any], key: str, title: str) -> list[str]:
    """The smells (or advisories) of kept tasks: counts by rule, then each with its reason."""
    found = [(r["id"], f) for r in report["records"] for f in r.get(key, ())]
    lines = [f"## {title}", ""]
    if not found:
        return lines + ["None.", ""]
    counts = report["counts"].get(f"{key}_by_rule") or {}
    lines += ["| rule | tasks |", "| --- | ---: |"]
    lines += [f"| {k} | {n} |" for k, n in counts.items()]
    lines += ["", "| id | rule | reason |", "| --- | --- | --- |"]
    lines += [f"| {_md_escape(i)} | {f['rule']} | {_md_escape(f['reason'])} |" for i, f in found]
    return lines + [""]


def _identical_results_markdown(report: dict[str, Any], shown: int = 8) -> list[str]:
    """Groups of kept tasks whose golds return the very same result (a weak benchmark)."""
    groups = report["identical_results"]
    lines = ["## Kept tasks with identical gold results", ""]
    if not groups:
        return lines + ["None: every kept gold returns a result of its own.", ""]
    c = report["counts"]
    lines += [
        f"{c['kept_in_identical_result_groups']} kept tasks fall into "
        f"{c['identical_result_groups']} groups whose golds return the very same result "
        "(score.comparison.result_hash); a model that learns one such result answers the "
        "whole group. `--max-per-result N` keeps at most N of each.",
        "",
        "| tasks | rows | first row | ids |",
        "| ---: | ---: | --- | --- |",
    ]
    for g in groups:
        ids = ", ".join(g["ids"][:shown]) + (
            f", ... ({len(g['ids']) - shown} more)" if len(g["ids"]) > shown else ""
        )
        lines.append(
            f"| {g['tasks']} | {g['rows']} | `{_md_escape(g['first_row'])}` | {_md_escape(ids)} |"
        )
    return lines + [""]
