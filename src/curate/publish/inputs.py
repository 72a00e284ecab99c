"""What a release is built from: the curation report and the database's columns, checked."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from curate.publish.errors import fail

REPORT_KEYS: dict[str, tuple[str, ...]] = {
    "database": ("path", "fingerprint", "schema"),
    "versions": ("sqlgold", "sqlglot", "duckdb"),
    "counts": ("kept", "dropped", "by_tier"),
    "comparator_profile": (),
}


def read_report(path: Path) -> dict[str, Any]:
    """The curation report (``<name>_report.json``); extra keys are kept and ignored."""
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise fail("no curation report (run `make curate` first)", path=str(path)) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise fail(f"cannot read the curation report: {e}", path=str(path)) from None
    if not isinstance(report, dict):
        raise fail("the curation report is not a JSON object", path=str(path))
    for key, subkeys in REPORT_KEYS.items():
        if key not in report:
            raise fail(f"the curation report has no {key!r}", path=str(path))
        if subkeys and not (
            isinstance(report[key], dict) and all(k in report[key] for k in subkeys)
        ):
            raise fail(f"the curation report's {key!r} needs {', '.join(subkeys)}", path=str(path))
    return report


def tier_counts(tasks: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Tasks per tier, tiers sorted.

    >>> tier_counts([{"tier": "simple"}, {"tier": "compositional"}, {"tier": "simple"}])
    {'compositional': 1, 'simple': 2}
    """
    return dict(sorted(Counter(t["tier"] for t in tasks).items()))


def check_report(
    report: Mapping[str, Any],
    tasks: Sequence[Mapping[str, Any]],
    *,
    fingerprint: str | None = None,
    path: str | None = None,
) -> None:
    """Refuse a report that describes another task file or another database."""
    counts = report["counts"]
    if counts["kept"] != len(tasks):
        raise fail(
            f"the curation report says {counts['kept']} tasks were kept, the task file has "
            f"{len(tasks)}: is it the report of this task file?",
            path=path,
        )
    by_tier = counts["by_tier"]
    if isinstance(by_tier, Mapping):
        reported = {
            tier: (n.get("kept") if isinstance(n, Mapping) else n) for tier, n in by_tier.items()
        }
        reported = {t: n for t, n in reported.items() if isinstance(n, int) and n}
        if all(isinstance(n, int) for n in reported.values()) and reported != tier_counts(tasks):
            raise fail(
                f"the curation report counts {reported} by tier, the task file has "
                f"{tier_counts(tasks)}",
                path=path,
            )
    if fingerprint is not None and report["database"]["fingerprint"] != fingerprint:
        raise fail(
            f"the database given has fingerprint {fingerprint}, the tasks were verified on "
            f"{report['database']['fingerprint']}: publish with the database of the report",
            path=path,
        )


def check_database_columns(columns: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The database schema rows ``{table, column, type, rows}``, checked and copied.

    >>> check_database_columns([{"table": "person", "column": "person_id", "type": "BIGINT",
    ...                          "rows": 1000}])
    [{'table': 'person', 'column': 'person_id', 'type': 'BIGINT', 'rows': 1000}]
    """
    rows = []
    for n, c in enumerate(columns):
        ok = (
            isinstance(c, Mapping)
            and all(isinstance(c.get(k), str) and c.get(k) for k in ("table", "column", "type"))
            and isinstance(c.get("rows"), int)
            and not isinstance(c.get("rows"), bool)
            and c["rows"] >= 0
        )
        if not ok:
            raise fail(f"database column {n} is not {{table, column, type, rows}}: {c!r}")
        rows.append({k: c[k] for k in ("table", "column", "type", "rows")})
    if not rows:
        raise fail("no database columns: the database config needs the schema")
    return rows
