"""Runs and curation reports made up to the shape of real ones, for the page tests and
the page bench: records as ``results.jsonl`` holds them (previews made by the scorer's
own :func:`score.scoring.result_preview.result_preview`), summaries by ``summarize``."""

from __future__ import annotations

import random
from typing import Any

from score.execution.result import QueryResult
from score.scoring.result_preview import result_preview
from score.statistics.summary import summarize

TIERS = ("simple", "compositional", "schema_aware", "unanswerable")
CATEGORIES = ("person", "drug", "visit", "condition", "measurement")
#: the hostile text every made-up run carries somewhere (a page must show it as text)
HOSTILE = "</script><img src=x onerror=alert(1)>"


def task_id(i: int) -> str:
    return f"omop-{i:05d}"


def make_tasks(n: int) -> dict[str, dict[str, Any]]:
    tasks = {}
    for i in range(n):
        tier = TIERS[i % len(TIERS)]
        tid = task_id(i)
        tasks[tid] = {
            "id": tid,
            "tier": tier,
            "category": CATEGORIES[i % len(CATEGORIES)],
            "difficulty": ("easy", "medium", "hard")[i % 3],
            "answerable": tier != "unanswerable",
            "question": f"How many persons have condition {i}? Return one number.",
            "questions": {"en": f"How many persons have condition {i}? Return one number."},
            "gold_sql": None
            if tier == "unanswerable"
            else (
                "SELECT p.gender_concept_id, COUNT(*) AS n FROM cdm.person AS p JOIN "
                f"cdm.condition_occurrence AS c ON c.person_id = p.person_id WHERE "
                f"c.condition_concept_id = {1000 + i} GROUP BY p.gender_concept_id ORDER BY n DESC"
            ),
            "unanswerable_because": None if tier != "unanswerable" else {"kind": "no_table"},
            "order_matters": False,
        }
    return tasks


def _results(i: int, rows: int) -> tuple[QueryResult, QueryResult]:
    gold = QueryResult.from_rows(
        ["gender_concept_id", "n"], [(8507 + k, 100 * (i % 7) + k) for k in range(rows)]
    )
    pred = QueryResult.from_rows(
        ["gender_concept_id", "n"], [(8507 + k, 100 * (i % 7) + k + (k % 2)) for k in range(rows)]
    )
    return gold, pred


def make_record(i: int, task: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """One record: the outcome cycles through right, wrong, errors and abstentions."""
    kind = ("correct", "mismatch", "execute_error", "format_failure", "abstained")[i % 5]
    if not task["answerable"]:
        kind = "abstained" if i % 2 else "execute_error"
    sql = None if kind in ("format_failure", "abstained") else task["gold_sql"] or "SELECT 1"
    if kind == "execute_error":
        sql = f"SELECT * FROM no_such_table_{i} /* {HOSTILE} */"
    preview = None
    reason = {
        "correct": "same 2 row(s) as a multiset over 2 column(s)",
        "mismatch": "1 gold row(s) missing from the prediction",
        "execute_error": f"Catalog Error: Table with name no_such_table_{i} does not exist!",
        "format_failure": "no SQL and no ABSTAIN in the output",
        "abstained": "the model abstained",
    }[kind]
    if kind in ("correct", "mismatch"):
        rows = 2 + (i % 9)
        gold, pred = _results(i, rows)
        preview = result_preview(
            gold, gold if kind == "correct" else pred, match=kind == "correct", order_matters=False
        )
    seconds = round(0.01 + rng.random() * 0.5, 6)
    return {
        "task_id": task["id"],
        "language": "en",
        "run": "made-up",
        "tier": task["tier"],
        "category": task["category"],
        "difficulty": task["difficulty"],
        "answerable": task["answerable"],
        "output": f"```sql\n{sql}\n```" if sql else "I cannot tell. " + HOSTILE,
        "context": None,
        "prediction_line": i + 1,
        "outcome": kind,
        "reason": reason,
        "sql": sql,
        "executed_sql": sql,
        "lf_match": (kind == "correct") if sql else None,
        "timings": {"execute_s": seconds, "total_s": round(seconds * 1.2, 6)},
        "preview": preview,
    }


def make_run(n: int, seed: int = 0, resamples: int = 200) -> tuple[dict, dict]:
    """A finished run of ``n`` instances (``read_run``'s shape) and its tasks by id."""
    rng = random.Random(seed)
    tasks = make_tasks(n)
    records = [make_record(i, tasks[task_id(i)], rng) for i in range(n)]
    summary = summarize(records, seed=seed, resamples=resamples)
    meta = {
        "format": "sqlgold.run/1",
        "run": "made-up",
        "profile": "sqlgold",
        "engine": "duckdb",
        "database": "synthea1k.duckdb",
        "prediction_dialect": "duckdb",
        "split": {"name": "all"},
        "tasks": "made-up",
        "tasks_sha256": "0" * 64,
    }
    return {"meta": meta, "summary": summary, "records": records, "priors": {}}, tasks


def make_curation(n: int) -> tuple[dict, list[dict], list[dict]]:
    """A curation report of ``n`` records (every seventh dropped), its tasks and sources."""
    tasks = list(make_tasks(n).values())
    kept, records, sources = [], [], []
    rules = ("limit_without_order", "empty_result", "transpile_failed")
    for i, t in enumerate(tasks):
        sql = t["gold_sql"] or "SELECT TOP 10 * FROM @cdm.person"
        sources.append(
            {
                "id": t["id"],
                "question": t["question"],
                "gold_sql": sql,
                "gold_dialect": "tsql",
                "category": t["category"],
            }
        )
        if i % 7 == 3:
            rule = rules[i % 3]
            records.append(
                {
                    "id": t["id"],
                    "status": "dropped",
                    "stage": "verify",
                    "rule": rule,
                    "reason": f"the gold breaks {rule} {HOSTILE}",
                }
            )
            continue
        task = {
            **t,
            "gold_sql": sql if t["gold_sql"] else "SELECT 1",
            "source_sql": sql,
            "source_dialect": "tsql",
            "transpile_rules": ["float_is_double"] if i % 2 else [],
            "answer_sql": "SELECT 1",
            "gold_result": {"columns": ["n"], "types": ["BIGINT"], "rows": 1},
        }
        kept.append(task)
        records.append(
            {"id": t["id"], "status": "kept", "tier": t["tier"], "result_sha256": "ab" * 32}
        )
    dropped = [r for r in records if r["status"] == "dropped"]
    by = {}
    for r in dropped:
        by[r["rule"]] = by.get(r["rule"], 0) + 1
    report = {
        "name": "made-up",
        "source": "made-up_source.jsonl",
        "tasks_file": "made-up_tasks.jsonl",
        "counts": {
            "records": len(records),
            "kept": len(kept),
            "dropped": len(dropped),
            "by_tier": {},
            "dropped_by_stage": {"verify": len(dropped)},
            "dropped_by_rule": by,
        },
        "problems": [],
        "records": records,
    }
    return report, kept, sources
