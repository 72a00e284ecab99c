"""Rule ``max_per_result``: kept tasks beyond the first N whose golds return the very
same result are dropped (off unless asked: ``curate --max-per-result``)."""

from __future__ import annotations

from typing import Any

from curate.tasks.verdict import Verdict, dropped
from curate.verify.gold import Drop
from curate.verify.identical_results import RULE as IDENTICAL_RULE
from curate.verify.identical_results import over_limit


def limit_per_result(
    outcomes: list[tuple[dict[str, Any] | None, Verdict]], limit: int
) -> list[tuple[dict[str, Any] | None, Verdict]]:
    """Rule max_per_result: drop kept tasks beyond the first ``limit`` of their result."""
    kept = [(v.id, v.result.sha256) for _, v in outcomes if v.result is not None]
    beyond = over_limit(kept, limit)
    out = []
    for task, verdict in outcomes:
        first = beyond.get(verdict.id)
        if first is None:
            out.append((task, verdict))
            continue
        drop = Drop(
            "verify",
            IDENTICAL_RULE,
            f"its gold returns the very result of {first} (sha256 {verdict.result.sha256[:12]}); "
            f"at most {limit} kept per result",
        )
        out.append(dropped(verdict.id, drop, list(verdict.notes)))
    return out
