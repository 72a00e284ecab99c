"""What scoring with a suite writes of an instance (pure): which instances the variants
judge (:func:`without_variants`, :func:`vocabulary_alone`), the ``suite`` entry of a
record (:func:`verdict`, :func:`settle`) and the summary's account of them
(:func:`suite_summary`).  The runs are :mod:`score.scoring.suite_phase`'s."""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import Any

from score.scoring.outcomes import Outcome
from score.suite.vocabulary_bound import reads_only_vocabulary


def mark_for_suite(record: dict[str, Any]) -> dict[str, Any]:
    """A base record as scoring with a suite keeps it: its base verdict, not yet judged
    by the suite."""
    record["base_correct"] = record["outcome"] == Outcome.CORRECT
    record["suite"] = None
    return record


def verdict(
    correct: bool,
    reason: str,
    *,
    told_apart_by: str | None = None,
    variants: int = 0,
    gold_failed: Iterable[str] = (),
    dropped: bool = False,
) -> dict[str, Any]:
    """A record's ``suite`` entry: its test-suite verdict, the variant that told the
    prediction from the gold (None if none did), why, the variants it matched on, those
    on which the gold failed, and whether the suite drops the task."""
    return {
        "correct": correct,
        "told_apart_by": told_apart_by,
        "reason": reason,
        "variants_matched": variants,
        "gold_failed_on": sorted(gold_failed),
        "dropped": dropped,
    }


def without_variants(
    record: dict[str, Any], drops: Mapping[str, str], judged: Container[str] = ()
) -> dict[str, Any] | None:
    """The suite verdict of an instance the variants do not judge, else None (it runs
    on them).  ``judged``: the tasks of ``drops`` some variants judge (those where its
    gold and reference answer agree, :attr:`Suite.differ_on`); the others are judged on
    the base database alone."""
    if not record["answerable"]:
        return verdict(
            record["base_correct"],
            "unanswerable: nothing to run on the variants (the base database's outcome stands)",
        )
    if not record["base_correct"]:
        return verdict(False, "not correct on the base database")
    if record["task_id"] in drops and record["task_id"] not in judged:
        reason = drops[record["task_id"]]
        return verdict(
            True,
            f"the suite drops this task ({reason}): judged on the base database only",
            dropped=True,
        )
    if not record.get("sql"):
        return verdict(True, "no SQL to run on the variants: judged on the base database only")
    return None


def vocabulary_alone(
    record: dict[str, Any],
    dialect: str | None = None,
    *,
    run_executed: bool = False,
    gold_reads_vocabulary_only: bool = False,
) -> bool:
    """Whether an instance the variants judge needs only the first variant and the
    vocabulary variants: it and its task's gold (``gold_reads_vocabulary_only``) read
    vocabulary tables only, which every other variant holds as the first does, so both
    return on each what they return on the first.  (Not the base database: its vocabulary
    lacks the suite's local concepts.)  ``dialect``:
    what its ``sql`` is written in (None: DuckDB's); ``run_executed``: its
    ``executed_sql`` is DuckDB SQL (a DuckDB base database), read instead.  An answer
    reading only the vocabulary for a gold that reads clinical rows runs on every
    variant: that is exactly the chance match a variant tells apart."""
    executed = record.get("executed_sql") if run_executed else None
    return gold_reads_vocabulary_only and reads_only_vocabulary(
        executed or record["sql"], None if executed else dialect
    )


def settle(record: dict[str, Any], entry: dict[str, Any]) -> None:
    """Write a suite verdict into its record: a prediction the suite tells apart is no
    longer ``correct``."""
    record["suite"] = entry
    if record["base_correct"] and not entry["correct"]:
        record["outcome"] = Outcome.MISMATCH.value
        record["reason"] = (
            f"correct on the base database, told apart by suite variant "
            f"{entry['told_apart_by']}: {entry['reason']}"
        )


def suite_summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """The summary's account of the suite: the instances only the suite caught (right on
    the base database, told apart by a variant), the tasks it drops that were scored,
    and the instances whose gold failed on some variant."""
    records = list(records)
    caught = [
        {
            "task_id": r["task_id"],
            "language": r["language"],
            "variant": r["suite"]["told_apart_by"],
            "reason": r["suite"]["reason"],
        }
        for r in records
        if r.get("base_correct") and r.get("suite") and not r["suite"]["correct"]
    ]
    dropped = sorted({r["task_id"] for r in records if (r.get("suite") or {}).get("dropped")})
    gold_failed = sum(1 for r in records if (r.get("suite") or {}).get("gold_failed_on"))
    return {
        "caught": caught,
        "n_caught": len(caught),
        "dropped_scored": dropped,
        "n_gold_failed": gold_failed,
    }
