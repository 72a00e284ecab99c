"""One instance's scoring decision: pure functions of what was found for it.

The pipeline (:mod:`score.scoring.pipeline`) runs the queries; what they found is judged
here, step by step in pipeline order.  Each step either decides the instance's
:class:`Decision` (an outcome and its reason) or returns None and lets it go on:

1. :func:`for_prediction`: no prediction (``missing``), or the generator said the model
   call failed (``generation_error``);
2. :func:`for_answer`: what became of the answer in its query process: an abstention, a
   cut-off or a format failure, or a query that failed (its error's outcome; ``cut_off``
   when the generator said the output hit its limit); :func:`for_csv` likewise for a
   result CSV;
3. :func:`for_unanswerable`: any answer to an unanswerable question is wrong;
4. :func:`for_gold`: a gold that fails (``gold_error``) or is not the result its task
   pinned (``gold_drift``);
5. :func:`for_verdict`: the comparator profile's verdict (``correct`` or ``mismatch``).

:func:`decide` composes them for a caller that has every fact at once; whatever the
facts, it returns a decision.

>>> from score.inputs.predictions import Prediction
>>> decide(True, None).outcome.value
'missing'
>>> from score.scoring.answer import AnswerReply
>>> reply = AnswerReply("abstain", "the answer is ABSTAIN")
>>> decide(False, Prediction("q1", output="ABSTAIN"), reply=reply)
Decision(outcome=<Outcome.ABSTAINED: 'abstained'>, reason='the answer is ABSTAIN')
"""

from __future__ import annotations

from dataclasses import dataclass

from score.comparison.profiles.base import Verdict
from score.execution.result import QueryError, QueryResult
from score.inputs.predictions import Prediction
from score.scoring.answer import AnswerReply
from score.scoring.extract import ABSTAIN, CUT_OFF, FORMAT_FAILURE
from score.scoring.outcomes import Outcome, outcome_for_error

_BY_KIND = {
    ABSTAIN: Outcome.ABSTAINED,
    CUT_OFF: Outcome.CUT_OFF,
    FORMAT_FAILURE: Outcome.FORMAT_FAILURE,
}


@dataclass(frozen=True)
class Decision:
    """An instance's outcome and why."""

    outcome: Outcome
    reason: str


def for_prediction(prediction: Prediction | None) -> Decision | None:
    """No prediction at all, or one the generator marked as a failed model call."""
    if prediction is None:
        return Decision(Outcome.MISSING, "no prediction for this instance")
    if prediction.status == "generation_error":
        return Decision(
            Outcome.GENERATION_ERROR, "the generator reported that the model call failed"
        )
    return None


def for_lost_process(error: QueryError) -> Decision:
    """The query process handling the answer had to be ended (past its time limit) or
    died: the error's outcome."""
    return Decision(outcome_for_error(error.kind), error.message)


def for_answer(prediction: Prediction, reply: AnswerReply) -> Decision | None:
    """What the answer's extraction, guard and run leave decided; None when its query
    ran and returned a result."""
    if reply.kind in _BY_KIND:
        return Decision(_BY_KIND[reply.kind], reply.reason)
    error = reply.error
    if error is None:
        return None
    if prediction.status == "cut_off":  # the query was cut short, not wrong
        return Decision(
            Outcome.CUT_OFF,
            f"the output hit its limit inside the query ({error.kind}: {error.message})",
        )
    return Decision(outcome_for_error(error.kind), error.message)


def for_csv(prediction: Prediction, read: QueryResult | QueryError | None) -> Decision | None:
    """A result CSV that the index marks as a failure (``read`` None) or that cannot be
    read; None when it was read."""
    if prediction.csv is None:
        return Decision(Outcome.EXECUTE_ERROR, "terminal failure (null in the index)")
    if isinstance(read, QueryError):
        return Decision(Outcome.EXECUTE_ERROR, f"cannot read the result CSV: {read.message}")
    return None


def for_unanswerable(answerable: bool) -> Decision | None:
    """Any answer but an abstention is wrong where the question cannot be answered."""
    if answerable:
        return None
    return Decision(Outcome.MISMATCH, "the question is unanswerable here; expected ABSTAIN")


def for_gold(gold: QueryResult | QueryError, drift: str | None) -> Decision | None:
    """A gold that failed, or whose result is not the one its task pinned (``drift``
    says how)."""
    if isinstance(gold, QueryError):
        return Decision(Outcome.GOLD_ERROR, f"the gold failed: {gold.kind}: {gold.message}")
    if drift is not None:
        return Decision(Outcome.GOLD_DRIFT, drift)
    return None


def for_verdict(verdict: Verdict | Exception) -> Decision:
    """The comparator's verdict, or the error of a value it could not handle."""
    if isinstance(verdict, Exception):
        return Decision(Outcome.MISMATCH, f"the results could not be compared: {describe(verdict)}")
    return Decision(Outcome.CORRECT if verdict.match else Outcome.MISMATCH, verdict.reason)


def for_failure(error: Exception) -> Decision:
    """A failure of sqlgold's own code while scoring one instance: that instance's
    outcome, never the end of the run."""
    return Decision(Outcome.EXECUTE_ERROR, f"scoring failed: {describe(error)}")


#: The decision of an instance no step decided (which the pipeline never leaves).
UNDECIDED = Decision(Outcome.EXECUTE_ERROR, "scoring failed: no outcome was decided")


def decide(
    answerable: bool,
    prediction: Prediction | None,
    *,
    reply: AnswerReply | QueryError | None = None,
    csv: QueryResult | QueryError | None = None,
    gold: QueryResult | QueryError | None = None,
    drift: str | None = None,
    verdict: Verdict | Exception | None = None,
) -> Decision:
    """Every step in order on the facts given: ``reply`` (or the error of a query
    process that had to be ended) for an answer, ``csv`` for a result CSV, then the
    gold, its ``drift`` and the comparator's ``verdict``."""
    decided = for_prediction(prediction)
    if decided is not None:
        return decided
    assert prediction is not None
    if prediction.kind == "csv":
        decided = for_csv(prediction, csv)
    elif isinstance(reply, QueryError):
        decided = for_lost_process(reply)
    elif reply is not None:
        decided = for_answer(prediction, reply)
    else:
        return UNDECIDED
    if decided is not None:
        return decided
    decided = for_unanswerable(answerable)
    if decided is not None:
        return decided
    if gold is None:
        return UNDECIDED
    decided = for_gold(gold, drift)
    if decided is not None:
        return decided
    return UNDECIDED if verdict is None else for_verdict(verdict)


def describe(e: BaseException) -> str:
    """An error as a reason shows it: its type and message, at most 300 characters."""
    text = f"{type(e).__name__}: {e}"
    return text if len(text) <= 300 else text[:297] + "..."
