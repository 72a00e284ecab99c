"""An answer decided by its text alone (the abstain prior's ``ABSTAIN``) goes to a query
process once per text, not once per instance, and every instance gets the same record."""

from __future__ import annotations

from score.scoring.gold_cache import GoldCache
from score.scoring.outcomes import Outcome
from score.scoring.pipeline import ScoringContext
from score.scoring.priors import prior_predictions
from tests.task_factory import make_task, scored_records


def without_timings(records):
    return [{k: v for k, v in r.items() if k != "timings"} for r in records]


def prior_context(executor, decided):
    """A priors' pass context (pinned golds), reusing answers decided by text in
    ``decided`` (None: never)."""
    return ScoringContext(
        executor,
        GoldCache(None, executor),
        "sqlgold",
        "p",
        gold_from_pin=True,
        decided_texts=decided,
    )


def test_an_abstention_is_extracted_once_for_every_instance(executor, monkeypatch):
    tasks = [make_task(f"t{i}") for i in range(6)] + [make_task("none", None)]
    from score.execution.executor import QueryStream

    sent = []
    real, real_send = executor.call, QueryStream.send

    def counting(request, **kwargs):
        sent.append(type(request).__name__)
        return real(request, **kwargs)

    def counting_send(stream, request):
        sent.append(type(request).__name__)
        return real_send(stream, request)

    monkeypatch.setattr(executor, "call", counting)
    monkeypatch.setattr(QueryStream, "send", counting_send)
    records = {}
    for decided in (None, {}):
        sent.clear()
        ctx = prior_context(executor, decided)
        records[decided is None] = scored_records(tasks, prior_predictions(tasks, "abstain"), ctx)
        if decided is None:
            assert len(sent) == len(tasks)  # each instance's text extracted in a query process
        else:
            assert len(sent) == 1 and len(decided) == 1  # once: the others reuse the verdict
    assert without_timings(records[True]) == without_timings(records[False])
    assert {r["outcome"] for r in records[False]} == {Outcome.ABSTAINED}


def test_an_answer_that_runs_is_prepared_once_per_gold(executor):
    """``SELECT 0`` is SQL: its logical form depends on the task's gold, so its
    preparation is reused only for the same request (text, gold, today, dialect): three
    tasks with one gold prepare it once, a fourth with another gold once more, and every
    record is the one a preparation of its own gives."""
    from score.scoring.answer import Answer

    tasks = [make_task(f"t{i}") for i in range(3)]
    tasks.append(make_task("other", "SELECT count(*) AS n FROM cdm.death", expect=[(0,)]))
    decided: dict = {}
    records = scored_records(
        tasks, prior_predictions(tasks, "select0"), prior_context(executor, decided)
    )
    prepared = [k for k in decided if isinstance(k, Answer)]
    assert len(prepared) == 2 and len(records) == 4
    alone = scored_records(
        tasks, prior_predictions(tasks, "select0"), prior_context(executor, None)
    )
    assert without_timings(records) == without_timings(alone)
