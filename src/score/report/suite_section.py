"""report.md's account of a run scored with a test suite (``score run --suite``): which
suite, and the instances only the suite caught: right on the base database, told apart
from their gold by a variant (:mod:`score.scoring.suite_phase`).

>>> summary = {"run": "m", "ex": 1.0, "ts": 0.5, "suite": {"path": "s", "variants": 3,
...            "manifest_sha256": "ab" * 32, "dropped_tasks": 0, "n_caught": 1,
...            "dropped_scored": [], "caught": [{"task_id": "q1", "language": "en",
...            "variant": "v1", "reason": "1 row, gold 2"}]}}
>>> [line for line in suite_sections([summary]) if line.startswith("| q1")]
['| q1 | en | v1 | 1 row, gold 2 |']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Instances listed per run (summary.json lists all).
LISTED = 50

SUITE_NOTE = (
    "TS is test-suite accuracy (Zhong, Yu and Klein, 2020): an answer counts as right only "
    "if its result is the gold's on the base database and on every database variant of the "
    "suite, compared under the same profile and order rule. EX is the base database's alone. "
    "RS(c) and the outcome counts follow the suite's verdicts."
)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _name(summary: Mapping[str, Any], index: int) -> str:
    return str(summary.get("run") or f"run {index + 1}")


def suite_sections(runs: Sequence[Mapping[str, Any]]) -> list[str]:
    """The "Test suite" section for the runs (priors excluded) scored with a suite."""
    lines: list[str] = []
    for i, s in enumerate(runs):
        suite = s.get("suite")
        if s.get("prior") or not suite:
            continue
        caught = suite.get("caught") or []
        lines += [
            f"### {_name(s, i)}",
            "",
            f"Suite {suite['path']} (suite.json sha256 {suite['manifest_sha256'][:12]}, "
            f"{suite['variants']} variant(s)). {suite['n_caught']} instance(s) right on the "
            "base database were told apart by a variant (only the suite caught them):",
            "",
        ]
        if caught:
            lines += ["| task | language | variant | why |", "|---|---|---|---|"]
            lines += [
                f"| {c['task_id']} | {c['language']} | {c['variant']} | {_md(c['reason'])} |"
                for c in caught[:LISTED]
            ]
            if len(caught) > LISTED:
                lines.append(f"| ... | | | {len(caught) - LISTED} more (summary.json lists all) |")
            lines.append("")
        dropped = suite.get("dropped_scored") or []
        if dropped:
            lines += [
                f"The suite drops {len(dropped)} of the scored tasks (gold and reference answer "
                "disagree on a variant): each is judged where the two agree, on the base "
                "database and the variants the suite does not name for it (on the base "
                f"database only if it names none): {', '.join(dropped)}.",
                "",
            ]
        if suite.get("n_gold_failed"):
            lines += [
                f"On {suite['n_gold_failed']} instance(s) the gold failed on some variant, "
                "which then did not judge them (results.jsonl names the variants).",
                "",
            ]
    return ["## Test suite", "", SUITE_NOTE, "", *lines] if lines else []
