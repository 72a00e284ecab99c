"""The page of a curation report: counts by status, tier, stage and rule, then every
record, each opening to its question(s), its SQL from source to DuckDB and why it was
kept or dropped.

Built from the report (``curate.write.report``'s dict), the tasks kept and the
source records (as their JSON objects); ``score`` knows neither curation nor its types.
"""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import sqlglot
from sqlglot.errors import SqlglotError

from score.pages.document import render_page
from score.pages.instance_view import preview_blocks
from score.pages.parts import count_bars, esc, meta_list, section
from score.pages.sql_text import pretty_sql
from score.sqlglot_quiet import quiet

#: What a kept record may be flagged with (shown in its row's "why").
_FLAGS = ("smells", "advisories")
COLUMNS = ("record", "status", "tier", "category", "stage", "rule", "why")
FILTERS = (1, 2, 3, 4, 5)


def plain_transpile(sql: str, dialect: str | None) -> str | None:
    """``sql`` moved to DuckDB by sqlglot alone (no fix-up rule), formatted; None if it
    cannot be (an OHDSI template with parameters, say)."""
    try:
        with quiet():  # sqlglot's warnings are not the reader's business here
            out = sqlglot.transpile(sql, read=dialect or None, write="duckdb", pretty=True)
    except (SqlglotError, RecursionError, ValueError, KeyError, TypeError):
        return None
    return ";\n\n".join(out) if out else None


def rules_diff(source_sql: str, dialect: str | None, gold_sql: str) -> list[str]:
    """The lines the fix-up rules (and rendering) changed: sqlglot's own transpile (-)
    against the task's DuckDB gold (+)."""
    plain = plain_transpile(source_sql, dialect)
    if plain is None:
        return []
    final = pretty_sql(gold_sql, "duckdb")
    lines = list(difflib.unified_diff(plain.splitlines(), final.splitlines(), lineterm="", n=1))
    return lines[2:]  # without the ---/+++ header


def record_blocks(
    record: Mapping[str, Any],
    task: Mapping[str, Any] | None,
    source: Mapping[str, Any] | None,
    rule_notes: Mapping[str, str] | None = None,
    verify_command: str | None = None,
) -> list[dict[str, Any]]:
    """What opening a record shows; ``rule_notes`` explains fix-up rules by name.  A
    dropped record shows what a curator needs to fix it: its gold as written and as
    DuckDB SQL, its reference answer, both results' differing rows when the answer
    differs, and ``verify_command``, the ``sqlgold verify`` that reproduces the drop."""
    facts = []  # status, tier, category, stage and rule are the row's own
    holder = task or source or {}
    if holder.get("difficulty"):
        facts.append(["difficulty", holder["difficulty"]])
    if task is not None:
        facts.append(
            ["fix-up rules applied", ", ".join(task.get("transpile_rules") or []) or "none"]
        )
    if record.get("result_sha256"):
        facts.append(["gold result sha256", record["result_sha256"]])
    blocks: list[dict[str, Any]] = [{"t": "kv", "items": facts}] if facts else []
    if record["status"] == "dropped":
        blocks.append(
            {
                "t": "text",
                "label": "why dropped",
                "text": f"{record.get('rule')}: {record.get('reason')}",
            }
        )
        if verify_command:
            blocks.append({"t": "text", "label": "reproduce the drop", "text": verify_command})
    for label, key in (("notes", "notes"), ("transpile warnings", "warnings")):
        if record.get(key):
            blocks.append({"t": "text", "label": label, "text": "\n".join(record[key])})
    for label, key in (("gold smells", "smells"), ("OMOP advisories", "advisories")):
        if record.get(key):
            items = [[f["rule"], f["reason"]] for f in record[key]]
            blocks.append({"t": "kv", "label": label, "items": items})
    questions = dict(holder.get("questions") or {})
    if not questions and holder.get("question"):
        questions = {"question": holder["question"]}
    if questions:
        blocks.append(
            {
                "t": "kv",
                "label": "question",
                "items": [[k, v] for k, v in sorted(questions.items())],
            }
        )
    source_sql = (task or {}).get("source_sql") or (source or {}).get("gold_sql")
    dialect = (task or {}).get("source_dialect") or (source or {}).get("gold_dialect")
    sides = []
    if source_sql:
        sides.append(
            {
                "t": "sql",
                "label": f"source SQL ({dialect or 'as written'})",
                "sql": source_sql,
                "fmt": 1,
            }
        )
    gold_sql = (task or {}).get("gold_sql") or record.get("gold_sql")
    if gold_sql:
        sides.append(
            {"t": "sql", "label": "DuckDB SQL (the gold)", "sql": pretty_sql(gold_sql, "duckdb")}
        )
    if sides:
        blocks.append({"t": "side", "items": sides})
    if task is None and source is not None and source.get("answer_sql"):
        answer_dialect = source.get("answer_dialect") or "duckdb"
        blocks.append(
            {
                "t": "sql",
                "label": f"reference answer ({answer_dialect})",
                "sql": source["answer_sql"],
                "fmt": 1,
            }
        )
    if record.get("preview"):
        blocks += preview_blocks(record["preview"], "reference answer", "reference answer")
    if source_sql and task is not None and task.get("gold_sql"):
        lines = rules_diff(source_sql, dialect, task["gold_sql"])
        if lines:
            blocks.append(
                {
                    "t": "diff",
                    "label": "what the fix-up rules changed (- sqlglot alone, + the gold)",
                    "lines": lines,
                }
            )
    applied = (task or {}).get("transpile_rules") or []
    if applied and rule_notes:
        notes = [[name, rule_notes.get(name, "-")] for name in applied]
        blocks.append({"t": "kv", "label": "the fix-up rules applied", "items": notes})
    if task is not None and task.get("answer_sql"):
        blocks.append(
            {
                "t": "sql",
                "label": "reference answer (returns the gold's result)",
                "sql": pretty_sql(task["answer_sql"], task.get("answer_dialect") or "duckdb"),
            }
        )
    if task is not None and task.get("gold_result"):
        g = task["gold_result"]
        blocks.append(
            {
                "t": "kv",
                "label": "gold result",
                "items": [
                    ["rows", g.get("rows")],
                    [
                        "columns",
                        ", ".join(
                            f"{c} {t}"
                            for c, t in zip(g.get("columns", []), g.get("types", []), strict=False)
                        ),
                    ],
                ],
            }
        )
    return blocks


def _verify_command(report: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    """The ``sqlgold verify`` that checks a dropped record again, as the report's curation
    read it (source, format, database); None for a kept one or one the import dropped."""
    source = report.get("source")
    if record["status"] != "dropped" or record.get("stage") == "import" or not source:
        return None
    fmt = report.get("source_format")
    words = ["sqlgold", "verify", "--id", record["id"], "--source", source]
    if fmt and fmt != "jsonl":
        words += ["--format", fmt]
    database = (report.get("database") or {}).get("path")
    if database:
        words += ["--db", database]
    profile = report.get("comparator_profile")
    if profile and profile != "sqlgold":
        words += ["--profile", profile]
    today = (report.get("settings") or {}).get("today")
    if today:
        words += ["--today", today]
    return shlex.join(words)


def curation_summary(report: Mapping[str, Any]) -> str:
    c = report.get("counts") or {}
    records = report.get("records") or []
    by_status: dict[str, int] = {}
    for r in records:
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    facts = meta_list(
        {
            "benchmark": report.get("name"),
            "source": report.get("source"),
            "task file": report.get("tasks_file"),
            "database": (report.get("database") or {}).get("path"),
            "profile": report.get("comparator_profile"),
        }
    )
    head = (
        f"<p><strong>{esc(c.get('records', len(records)))} records: {esc(c.get('kept', 0))} kept, "
        f"{esc(c.get('dropped', 0))} dropped</strong>; {esc(len(report.get('problems') or []))} "
        "source line(s) unreadable.</p>"
    )
    charts = [count_bars("by status", by_status)]
    for key, title in (
        ("by_tier", "kept, by tier"),
        ("dropped_by_stage", "dropped, by stage"),
        ("dropped_by_rule", "dropped, by rule"),
        ("by_category", "kept, by category"),
        ("smells_by_rule", "kept, gold smells by rule"),
        ("advisories_by_rule", "kept, OMOP advisories by rule"),
    ):
        if c.get(key):
            charts.append(count_bars(title, c[key]))
    return facts + section("Counts", head + '<div class="charts">' + "".join(charts) + "</div>")


def curation_page(
    report: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]] = (),
    sources: Sequence[Mapping[str, Any]] = (),
    rule_notes: Mapping[str, str] | None = None,
) -> str:
    """The page of a curation ``report`` with its kept ``tasks`` and ``sources`` records;
    ``rule_notes`` (fix-up rule name -> what it does) explains the rules a gold went through."""
    by_task = {t["id"]: t for t in tasks}
    by_source = {s["id"]: s for s in sources if "id" in s}
    rows = []
    for r in report.get("records") or []:
        task, source = by_task.get(r["id"]), by_source.get(r["id"])
        holder = task or source or {}
        why = r.get("reason") or ("" if r["status"] == "kept" else "-")
        flagged = [f"{k}: " + ", ".join(f["rule"] for f in r[k]) for k in _FLAGS if r.get(k)]
        if r["status"] == "kept" and flagged:
            why = "; ".join(flagged)
        rows.append(
            {
                "id": r["id"],
                "cls": r["status"],
                "c": [
                    r["id"],
                    r["status"],
                    r.get("tier"),
                    holder.get("category"),
                    r.get("stage"),
                    r.get("rule"),
                    why,
                ],
                "d": record_blocks(r, task, source, rule_notes, _verify_command(report, r)),
            }
        )
    data = {
        "kind": "curation",
        "columns": [{"key": k, "label": k} for k in COLUMNS],
        "filters": list(FILTERS),
        "rows": rows,
    }
    title = f"sqlgold curation {report.get('name') or ''}".strip()
    return render_page(title, curation_summary(report), data, "Records")
