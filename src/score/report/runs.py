"""Runs reported or compared together: what they must share, and what their report reads.

Runs share a report only when they scored the same task set on the same database, with
the same comparator profile, split and test suite; :func:`meta_for` refuses others,
naming what differs and each run's value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from score.errors import ScoringError


def _split_name(meta: dict[str, Any]) -> str:
    split = meta.get("split") or {}
    return split.get("name", "all") if isinstance(split, dict) else str(split)


def _task_set(meta: dict[str, Any]) -> str:
    """The task set a run scored, by its content (the set hash), whatever file or release
    folder held it; a run written before the set hash was recorded, by its file."""
    if meta.get("task_set_sha256"):
        return f"set sha256 {meta['task_set_sha256'][:12]}"
    return f"{meta['tasks']} (file sha256 {meta['tasks_sha256'][:12]})"


#: What runs must share to be reported or compared together: label -> how to read it.
_SHARED = {
    "database fingerprint": lambda m: m["database_fingerprint"],
    "task set": _task_set,
    "comparator profile": lambda m: m["profile"],
    "split": _split_name,
    "test suite": lambda m: (m.get("suite") or {}).get("manifest_sha256", "none")[:12],
}


def meta_for(runs: list[dict[str, Any]], names: list[str] | None = None) -> dict[str, str]:
    """The report's header for ``runs`` (read by :func:`score.scoring.run_folder.read_run`),
    or a ScoringError naming what they do not share."""
    first = runs[0]["meta"]
    names = names or [str(r.get("path") or f"run {i + 1}") for i, r in enumerate(runs)]
    differ = []
    for label, read in _SHARED.items():
        values = [read(r["meta"]) for r in runs]
        if len(set(values)) > 1:
            pairs = ", ".join(f"{n}: {v}" for n, v in zip(names, values, strict=True))
            differ.append(f"{label} ({pairs})")
    if differ:
        raise ScoringError(
            "the runs differ in " + "; ".join(differ) + "; they cannot share one report"
        )
    check = first.get("database_fingerprint_check")  # runs before 0.x do not say
    return {
        "database": f"{first['database']} (fingerprint {first['database_fingerprint']}"
        + (f", {check})" if check else ")"),
        "task_set": f"{_task_set(first)} ({first['tasks']})",
        "comparator_profile": first["profile"],
        "split": _split_name(first),
        **(
            {"test_suite": f"{suite['path']} (suite.json sha256 {suite['manifest_sha256'][:12]})"}
            if (suite := first.get("suite"))
            else {}
        ),
    }


def summaries_with_priors(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs' summaries, then the priors' (each prior once, by name)."""
    summaries = [r["summary"] for r in runs]
    priors: dict[str, dict[str, Any]] = {}
    for r in runs:
        priors.update(r["priors"])
    return summaries + [priors[k] for k in sorted(priors)]


def tasks_of(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The tasks a run scored, by id, for its page's gold SQL and questions: None when
    the task file is gone or is no longer the one scored (the page says so)."""
    from score.errors import SqlgoldError
    from score.inputs.task_set import open_task_set
    from score.scoring.run import tasks_sha256

    path = Path(meta.get("tasks") or "")
    try:
        if not path.exists() or tasks_sha256(path) != meta.get("tasks_sha256"):
            return None
        return {t["id"]: t for t in open_task_set(path).tasks}
    except (SqlgoldError, OSError, ValueError):
        return None
