"""The outcome classes of one scored instance, and how executor errors map to them.

Seed 000 defines how far a generated query got (correct ... gold_error); seed 004 adds
abstention, cut-off and format failure; ``missing`` is a task with no prediction (the
denominator is always the whole task set); ``gold_drift`` is a task whose gold result on
this database is not the one it was verified with (:mod:`score.scoring.gold_pin`).
An :class:`Outcome` is a ``str``: it is written, read and compared as its value.

>>> outcome_for_error("catalog_error").value
'render_error'
>>> Outcome.CORRECT == "correct"
True
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """What became of one instance, in the order reports list them."""

    CORRECT = "correct"  # executed and matched the gold result
    MISMATCH = "mismatch"  # executed and returned a different result
    EXECUTE_ERROR = "execute_error"  # the database rejected it or it failed while running
    RENDER_ERROR = "render_error"  # it names a table or column the schema lacks
    BUILD_ERROR = "build_error"  # valid SQL that is not one read-only SELECT (guard)
    PARSE_ERROR = "parse_error"  # not SQL at all
    GENERATION_ERROR = "generation_error"  # the model call failed
    GOLD_ERROR = "gold_error"  # the task's own gold failed; excluded from every rate
    GOLD_DRIFT = "gold_drift"  # the gold's result is not the one pinned; excluded everywhere
    ABSTAINED = "abstained"  # the model answered ABSTAIN (or null)
    CUT_OFF = "cut_off"  # no SQL and no ABSTAIN, and the output hit its limit
    FORMAT_FAILURE = "format_failure"  # no SQL and no ABSTAIN in the text
    MISSING = "missing"  # no prediction for this instance


#: Every outcome's value, in order.
OUTCOMES: tuple[str, ...] = tuple(o.value for o in Outcome)

#: Outcomes that say nothing about the model, only about the task on this database: in
#: no rate and no denominator.
EXCLUDED: frozenset[Outcome] = frozenset({Outcome.GOLD_ERROR, Outcome.GOLD_DRIFT})

#: Outcomes where the model gave an answer that is not right (the -c of RS(c) on an
#: answerable question): everything except correct, abstained and the excluded.
FAILED_ANSWERS: frozenset[Outcome] = (
    frozenset(Outcome)
    - {
        Outcome.CORRECT,
        Outcome.ABSTAINED,
    }
    - EXCLUDED
)

_ERROR_KIND_TO_OUTCOME = {
    "guard_rejected": Outcome.BUILD_ERROR,
    "parse_error": Outcome.PARSE_ERROR,
    "catalog_error": Outcome.RENDER_ERROR,
    "binder_error": Outcome.EXECUTE_ERROR,
    "timeout": Outcome.EXECUTE_ERROR,
    "row_cap": Outcome.EXECUTE_ERROR,
    "runtime_error": Outcome.EXECUTE_ERROR,
}


def outcome_for_error(kind: str) -> Outcome:
    """The outcome class of a prediction whose query failed with ``kind``."""
    try:
        return _ERROR_KIND_TO_OUTCOME[kind]
    except KeyError:
        raise ValueError(f"unknown query error kind {kind!r}") from None
