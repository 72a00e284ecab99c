"""What the reports of several runs are made of (``score report``, ``score compare``):
the meta lines the runs must share, their summaries bootstrapped alike, and the tasks a
run scored.  Imported when a report is written, never at start-up."""

from __future__ import annotations

from pathlib import Path

from score.errors import ScoringError

#: What a comparison folder holds (``score compare`` replaces only these).
COMPARISON_FILES = frozenset({"comparison.json", "report.md", "chart.svg", "report.html"})

#: What a leaderboard writes (``score compare``: beside a comparison of two runs, alone
#: for more).
LEADERBOARD_FILES = frozenset({"leaderboard.json", "leaderboard.md", "leaderboard.html"})


def _split_name(meta: dict) -> str:
    split = meta.get("split") or {}
    return split.get("name", "all") if isinstance(split, dict) else str(split)


def _task_set(meta: dict) -> str:
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


def meta_for(
    runs: list[dict], names: list[str] | None = None, *, suites_may_differ: bool = False
) -> dict[str, str]:
    """The report's meta lines; the runs must share what makes them one report (a
    comparison may pair a run scored with a test suite and one without: EX and the
    rest compare, TS only where both have it)."""
    first = runs[0]["meta"]
    names = names or [str(r.get("path") or f"run {i + 1}") for i, r in enumerate(runs)]
    differ = []
    for label, read in _SHARED.items():
        if suites_may_differ and label == "test suite":
            continue
        values = [read(r["meta"]) for r in runs]
        if len(set(values)) > 1:
            pairs = ", ".join(f"{n}: {v}" for n, v in zip(names, values, strict=True))
            differ.append(f"{label} ({pairs})")
    if differ:
        raise ScoringError(
            "the runs differ in " + "; ".join(differ) + "; they cannot share one report"
        )
    check = first.get("database_fingerprint_check")  # runs before 0.x do not say
    suites = [r["meta"].get("suite") for r in runs]
    if suites_may_differ and len({(x or {}).get("manifest_sha256") for x in suites}) > 1:
        shown = "; ".join(
            f"{n}: " + (f"{x['path']} (suite.json sha256 {x['manifest_sha256'][:12]})" if x
                        else "none (TS is compared only where both runs have a suite)")
            for n, x in zip(names, suites, strict=True)
        )  # fmt: skip
        first = {**first, "suite": None}
    else:
        shown = None
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
        **({"test_suite": shown} if shown else {}),
    }


def summaries_with_priors(runs: list[dict], bootstrap: dict | None = None) -> list[dict]:
    """The runs' summaries and their priors', for one report: all bootstrapped alike.
    A run bootstrapped otherwise than ``bootstrap`` (the comparison's; else the first
    run's) is summarised again from its records with it (a summary is a function of
    them); a prior summarised otherwise is left out (its records are not kept); the
    report says which (``report_notes``)."""
    from score.statistics.summary import summarize

    boot = bootstrap or runs[0]["summary"]["bootstrap"]
    summaries = []
    for r in runs:
        summary = r["summary"]
        if not _same_bootstrap(summary["bootstrap"], boot):
            again = summarize(r["records"], seed=boot["seed"], resamples=boot["resamples"],
                              confidence=boot["confidence"])  # fmt: skip
            note = (
                f"summarised again from its results with {boot['resamples']:,} resamples "
                f"(seed {boot['seed']}), for one set of draws: it was scored with "
                f"{summary['bootstrap']['resamples']:,} (seed {summary['bootstrap']['seed']})"
            )
            summary = {**summary, **again, "report_notes": [note]}
        summaries.append(summary)
    priors: dict[str, dict] = {}
    left_out = []
    for r in runs:
        for name, prior in r["priors"].items():
            if _same_bootstrap(prior["bootstrap"], boot):
                priors[name] = prior
            else:
                left_out.append(name)
    if left_out:
        note = (
            f"priors {', '.join(sorted(set(left_out)))} of a run bootstrapped otherwise are "
            "left out (their results are not kept to summarise again)"
        )
        notes = [*summaries[0].get("report_notes", []), note]
        summaries[0] = {**summaries[0], "report_notes": notes}
    return summaries + [priors[k] for k in sorted(priors)]


def _same_bootstrap(one: dict, other: dict) -> bool:
    keys = ("seed", "resamples", "confidence", "generator")
    return all(one.get(k) == other.get(k) for k in keys)


def tasks_of(meta: dict) -> dict | None:
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
