"""The suite phase's pure parts: which instances the variants judge, how a verdict is
written into its record, and what the summary says of them."""

from __future__ import annotations

from score.scoring.suite_verdicts import (
    mark_for_suite,
    settle,
    suite_summary,
    verdict,
    vocabulary_alone,
    without_variants,
)
from score.statistics.metrics import record


def marked(outcome: str, **extra) -> dict:
    return mark_for_suite(record("q1", outcome, **extra))


def test_only_answers_right_on_the_base_database_of_kept_answerable_tasks_run_on_variants():
    assert without_variants(marked("correct"), {}) is None
    wrong = without_variants(marked("mismatch"), {})
    assert wrong is not None and wrong["correct"] is False and wrong["told_apart_by"] is None
    dropped = without_variants(marked("correct"), {"q1": "gold and answer differ on v2"})
    assert dropped is not None and dropped["correct"] and dropped["dropped"]
    assert "gold and answer differ on v2" in dropped["reason"]
    abstained = without_variants(marked("abstained", answerable=False), {})
    assert abstained is not None and abstained["correct"] is False  # its outcome stands
    assert without_variants(marked("correct", answerable=False), {}) is not None


def test_a_verdict_that_tells_an_answer_apart_makes_it_a_mismatch_naming_the_variant():
    rec = marked("correct")
    settle(rec, verdict(False, "1 row, gold 2", told_apart_by="v7", variants=6))
    assert rec["outcome"] == "mismatch" and rec["base_correct"] is True
    assert rec["reason"] == (
        "correct on the base database, told apart by suite variant v7: 1 row, gold 2"
    )
    kept = marked("correct")
    settle(kept, verdict(True, "the same result on 7 of 7 variant(s)", variants=7))
    assert kept["outcome"] == "correct" and kept["suite"]["variants_matched"] == 7
    wrong = marked("execute_error")
    settle(wrong, verdict(False, "not correct on the base database"))
    assert wrong["outcome"] == "execute_error"  # the base outcome stands


def test_the_summary_lists_what_only_the_suite_caught_and_the_dropped_tasks():
    caught = marked("correct")
    settle(caught, verdict(False, "differs", told_apart_by="v1"))
    dropped = mark_for_suite(record("q2", "correct"))
    settle(dropped, verdict(True, "dropped", dropped=True))
    failed = mark_for_suite(record("q3", "correct"))
    settle(failed, verdict(True, "same", variants=1, gold_failed=["v2"]))
    plain_wrong = mark_for_suite(record("q4", "mismatch"))
    settle(plain_wrong, verdict(False, "not correct on the base database"))
    s = suite_summary([caught, dropped, failed, plain_wrong])
    assert s["caught"] == [
        {"task_id": "q1", "language": "en", "variant": "v1", "reason": "differs"}
    ]
    assert s["n_caught"] == 1 and s["dropped_scored"] == ["q2"] and s["n_gold_failed"] == 1


def test_an_answer_that_reads_the_vocabulary_only_is_judged_on_one_variant_alone():
    # every variant holds the same vocabulary (the base database's rows and the suite's
    # local concepts): where the gold reads it only too, the first variant says it all.
    # Not the base database, which lacks the local concepts.
    concept = "SELECT concept_name FROM cdm.concept WHERE concept_id = 8507"
    only = {"gold_reads_vocabulary_only": True}
    assert without_variants(marked("correct", sql=concept), {}) is None  # it runs
    assert vocabulary_alone(marked("correct", sql=concept), **only)
    # a gold that reads clinical rows changes on a variant, such an answer does not:
    # exactly the coincidence a variant tells apart, on every variant
    assert not vocabulary_alone(marked("correct", sql=concept))
    # on a DuckDB base database the DuckDB SQL it became is what is read
    ran = marked("correct", sql=concept, executed_sql="SELECT count(*) FROM cdm.person")
    assert not vocabulary_alone(ran, run_executed=True, **only)
    assert vocabulary_alone(ran, **only)  # its text, not DuckDB's SQL
    for sql in (
        "SELECT COUNT(*) FROM cdm.person",
        "SELECT c.concept_name FROM cdm.concept c "
        "JOIN cdm.condition_occurrence co ON co.condition_concept_id = c.concept_id",
        "WITH person AS (SELECT * FROM cdm.concept) SELECT * FROM person",
        "SELECT 1",  # no table: nothing says what it reads
        "SELECT concept_id FROM other.concept",  # not the vocabulary a variant holds
        "SELECT * FROM read_parquet('concept.parquet')",
        "SELECT concept_id FROM cdm.source_to_concept_map",  # variants do not share it
    ):
        assert not vocabulary_alone(marked("correct", sql=sql), **only), sql
    # PostgreSQL SQL is read as PostgreSQL
    pg = marked("correct", sql="SELECT concept_name::text FROM cdm.concept LIMIT 1")
    assert vocabulary_alone(pg, "postgres", **only)
