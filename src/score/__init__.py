"""sqlgold's scoring: model predictions run safely, compared, scored and reported.

The public API (documented in docs/reference/python-api.md; everything else is internal
and may change):

- :func:`score_run`: score a predictions file against a task set into a run folder;
- :func:`report_runs`: the report and page of finished runs;
- :func:`compare_runs`: two runs compared (McNemar, paired bootstrap);
- :func:`rank_runs`: two or more runs ranked in a leaderboard (EX and TS with intervals
  and ranks, pairwise McNemar tests with Holm's correction);
- :func:`build_suite`: the test suite of a task set;
- :func:`limits`: the limits every query runs under (timeout, rows, memory, today);
- :func:`database`: the database a ``db`` argument names (the embedded one by default);
- :class:`ScoredRun`, :class:`Report`, :class:`Comparison`, :class:`Leaderboard`,
  :class:`Suite`: what each returns.

The names are loaded when first used, so importing the package (as the command line
does) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from score.api import (
        Comparison,
        Leaderboard,
        Report,
        ScoredRun,
        Suite,
        build_suite,
        compare_runs,
        database,
        limits,
        rank_runs,
        report_runs,
        score_run,
    )

__all__ = [
    "Comparison",
    "Leaderboard",
    "Report",
    "ScoredRun",
    "Suite",
    "build_suite",
    "compare_runs",
    "database",
    "limits",
    "rank_runs",
    "report_runs",
    "score_run",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from score import api

        return getattr(api, name)
    raise AttributeError(f"module 'score' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
