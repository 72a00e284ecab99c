"""The outcome classes of one scored instance, and how executor errors map to them.

Seed 000 defines how far a generated query got (correct ... gold_error); seed 004 adds
abstention, cut-off and format failure; ``missing`` is a task with no prediction (the
denominator is always the whole task set); ``gold_drift`` is a task whose gold result on
this database is not the one it was verified with (:mod:`score.scoring.gold_pin`).

>>> outcome_for_error("catalog_error")
'render_error'
>>> outcome_for_error("timeout")
'execute_error'
"""

from __future__ import annotations

CORRECT = "correct"  # executed and matched the gold result
MISMATCH = "mismatch"  # executed and returned a different result
EXECUTE_ERROR = "execute_error"  # the database rejected it or it failed while running
RENDER_ERROR = "render_error"  # it names a table or column the schema lacks
BUILD_ERROR = "build_error"  # valid SQL that is not one read-only SELECT (guard)
PARSE_ERROR = "parse_error"  # not SQL at all
GENERATION_ERROR = "generation_error"  # the model call failed
GOLD_ERROR = "gold_error"  # the task's own gold failed; excluded from every rate
GOLD_DRIFT = "gold_drift"  # the gold's result is not the one pinned; excluded from every rate
ABSTAINED = "abstained"  # the model answered ABSTAIN (or null)
CUT_OFF = "cut_off"  # no SQL and no ABSTAIN, and the output hit its limit
FORMAT_FAILURE = "format_failure"  # no SQL and no ABSTAIN in the text
MISSING = "missing"  # no prediction for this instance

OUTCOMES: tuple[str, ...] = (
    CORRECT,
    MISMATCH,
    EXECUTE_ERROR,
    RENDER_ERROR,
    BUILD_ERROR,
    PARSE_ERROR,
    GENERATION_ERROR,
    GOLD_ERROR,
    GOLD_DRIFT,
    ABSTAINED,
    CUT_OFF,
    FORMAT_FAILURE,
    MISSING,
)

#: Outcomes that say nothing about the model, only about the task on this database: in
#: no rate and no denominator.
EXCLUDED: frozenset[str] = frozenset({GOLD_ERROR, GOLD_DRIFT})

#: Outcomes where the model gave an answer that is not right (the -c of RS(c) on an
#: answerable question): everything except correct, abstained and the excluded.
FAILED_ANSWERS: frozenset[str] = frozenset(OUTCOMES) - {CORRECT, ABSTAINED} - EXCLUDED

_ERROR_KIND_TO_OUTCOME = {
    "guard_rejected": BUILD_ERROR,
    "parse_error": PARSE_ERROR,
    "catalog_error": RENDER_ERROR,
    "binder_error": EXECUTE_ERROR,
    "timeout": EXECUTE_ERROR,
    "row_cap": EXECUTE_ERROR,
    "runtime_error": EXECUTE_ERROR,
}


def outcome_for_error(kind: str) -> str:
    """The outcome class of a prediction whose query failed with ``kind``."""
    try:
        return _ERROR_KIND_TO_OUTCOME[kind]
    except KeyError:
        raise ValueError(f"unknown query error kind {kind!r}") from None
