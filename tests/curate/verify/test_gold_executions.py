"""How often curation runs a gold: once for every check that can share its result, a
second time only where its plan can give another result.  Counted at the real
Executor's requests (every query process, the collation check's too) on the embedded
DuckDB database."""

from __future__ import annotations

import threading

import pytest

from curate.pipeline import CurationOptions, curate_record, curation_context
from curate.sources.records import SourceRecord, UnanswerableBecause
from curate.verify.reference_rules import ReferenceRules, order_probe, split_probe
from score.comparison.result_hash import result_sha256
from score.execution.executor import Executor
from score.execution.guard import check_statement
from score.execution.processes.messages import Execute
from score.execution.result import QueryResult


@pytest.fixture
def requests(monkeypatch) -> list[str]:
    """The SQL of every Execute request any Executor sends, in order."""
    sent: list[str] = []
    real = Executor.call

    def counting(self, request, **kwargs):
        if isinstance(request, Execute):
            sent.append(request.sql)
        return real(self, request, **kwargs)

    monkeypatch.setattr(Executor, "call", counting)
    return sent


def curate(executor, gold: str, answer: str | None = None, **extra):
    record = SourceRecord(
        id="r1",
        question="A question.",
        gold_sql=gold,
        gold_dialect="duckdb",
        answer_sql=answer,
        answer_dialect="duckdb" if answer else None,
        **extra,
    )
    with curation_context(executor, CurationOptions()) as ctx:
        return curate_record(record, ctx)


@pytest.mark.parametrize(
    "gold",
    [
        "SELECT gender_concept_id, COUNT(*) AS n FROM cdm.person GROUP BY gender_concept_id",
        # an order that matters, shown total by the first run (its keys appended)
        "SELECT gender_concept_id AS g, COUNT(*) AS n FROM cdm.person GROUP BY 1 ORDER BY n DESC",
        "SELECT person_id, year_of_birth FROM cdm.person WHERE person_id < 500 ORDER BY 2, 1",
        # the LIMIT's tie check, the order and the result from the same run
        "SELECT person_id, year_of_birth AS y FROM cdm.person ORDER BY y DESC, 1 LIMIT 5",
    ],
)
def test_a_deterministic_gold_runs_once_for_every_check(executor, requests, gold):
    task, verdict = curate(executor, gold)
    assert verdict.status == "kept", verdict.reason
    assert len(requests) == 1, requests
    assert task["gold_result"]["rows"] == executor.execute(gold).num_rows


def test_the_result_kept_is_the_gold_s_own(executor, requests):
    gold = "SELECT person_id, year_of_birth AS y FROM cdm.person ORDER BY y DESC, 1 LIMIT 5"
    task, _ = curate(executor, gold)
    own = executor.execute(gold)
    assert task["gold_result"]["columns"] == ["person_id", "y"]
    assert task["gold_result"]["types"] == list(own.types)
    assert task["gold_result"]["sha256"] == result_sha256(own, ordered=True)


def test_a_reference_answer_is_the_one_more_execution(executor, requests):
    gold = "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8532"
    answer = "SELECT count(person_id) FILTER (WHERE gender_concept_id = 8532) FROM cdm.person"
    _, verdict = curate(executor, gold, answer)
    assert verdict.status == "kept", verdict.reason
    assert sorted(requests) == sorted([gold, answer])


def test_the_answer_runs_beside_its_gold_and_a_dropped_gold_still_decides(executor, monkeypatch):
    # the answer is sent from a thread of its own (so a second query process runs it
    # while the gold's checks run), and the verdict is what running it after would give
    threads: dict[str, str] = {}
    real = Executor.call

    def noting(self, request, **kwargs):
        if isinstance(request, Execute):
            threads[request.sql] = threading.current_thread().name
        return real(self, request, **kwargs)

    monkeypatch.setattr(Executor, "call", noting)
    gold = "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8532"
    answer = "SELECT COUNT(*) AS n FROM cdm.person WHERE gender_concept_id = 8507"
    _, verdict = curate(executor, gold, answer)
    assert (verdict.stage, verdict.rule) == ("answer", "answer_matches")
    assert threads[answer].startswith("sqlgold-answer") and threads[answer] != threads[gold]
    # a gold that fails: its drop, not its (also failing) answer's
    _, verdict = curate(executor, "SELECT nope FROM cdm.person", "SELECT nada FROM cdm.person")
    assert (verdict.stage, verdict.rule) == ("verify", "runs")


def test_an_order_left_open_by_ties_is_dropped_every_time_without_a_second_run(executor, requests):
    # persons tied on gender_concept_id differ: their order is the plan's; whether two
    # runs agree is luck, so the verdict does not rest on a second run
    gold = (
        "SELECT person_id, gender_concept_id FROM cdm.person WHERE person_id < 40 "
        "ORDER BY gender_concept_id"
    )
    for _ in range(3):
        requests.clear()
        _, verdict = curate(executor, gold)
        assert len(requests) == 1 and "_tie_k0" in requests[0], requests
        assert (verdict.stage, verdict.rule) == ("verify", "deterministic")
        assert "leaves rows that differ tied (rows" in verdict.reason
    # the determinism check off: kept as it came
    record = SourceRecord(id="r1", question="A question.", gold_sql=gold, gold_dialect="duckdb")
    options = CurationOptions(rules=ReferenceRules(deterministic=False))
    with curation_context(executor, options) as ctx:
        assert curate_record(record, ctx)[1].status == "kept"
    # a tie-breaker closes the order: kept, in one run
    requests.clear()
    _, verdict = curate(executor, gold + ", person_id")
    assert verdict.status == "kept" and len(requests) == 1, verdict.reason


@pytest.mark.parametrize(
    ("gold", "rule", "runs"),
    [
        # a random draw varies by construction: no second run to coincide by chance
        ("SELECT random() AS r", "deterministic", 1),
        # the first run shows a total order (random keys do not tie), the tree still varies
        ("SELECT person_id, random() AS r FROM cdm.person ORDER BY r LIMIT 3", "deterministic", 1),
        ("SELECT count(*) AS n FROM cdm.person WHERE random() < 0.5", "deterministic", 1),
        ("SELECT gen_random_uuid() AS u", "deterministic", 1),
        # the first run shows the cut: its rule, whatever a second run would have shown
        (
            "SELECT gender_concept_id FROM cdm.person ORDER BY gender_concept_id LIMIT 3",
            "no_ties_at_limit",
            1,
        ),
        (
            "SELECT person_id, gender_concept_id FROM cdm.person ORDER BY gender_concept_id "
            "LIMIT 3",
            "no_ties_at_limit",
            1,
        ),
    ],
)
def test_a_nondeterministic_gold_is_still_caught(executor, requests, gold, rule, runs):
    for _ in range(3):  # the same rule every time
        requests.clear()
        _, verdict = curate(executor, gold)
        assert (verdict.stage, verdict.rule) == ("verify", rule), verdict.reason
        assert len(requests) == runs, requests


def test_unanswerable_claims_are_counted_by_one_query(executor, requests):
    because = UnanswerableBecause(empty_tables=("provider",), null_columns=("person.provider_id",))
    _, verdict = curate(executor, None, answerable=False, unanswerable_because=because)
    assert verdict.status == "kept", verdict.reason
    assert len(requests) == 1, requests


def test_an_unanswerable_claim_on_a_missing_column_is_still_named(executor, requests):
    because = UnanswerableBecause(
        empty_tables=("provider",), null_columns=("person.no_such_column",)
    )
    _, verdict = curate(executor, None, answerable=False, unanswerable_because=because)
    assert (verdict.stage, verdict.rule) == ("unanswerable", "column_exists")
    assert "person.no_such_column" in verdict.reason


def _result(rows: list[tuple]) -> QueryResult:
    names = ["person_id", "y", "_tie_k0"]
    return QueryResult.from_rows(names, rows)


@pytest.mark.parametrize(
    ("rows", "cut", "open_"),
    [
        ([(1, 1950, 1950), (2, 1960, 1960), (3, 1970, 1970), (4, 1980, 1980)], False, False),
        # rows 1 and 2 tie on y and differ: the order between them is open
        ([(1, 1950, 1950), (2, 1950, 1950), (3, 1970, 1970), (4, 1980, 1980)], False, True),
        # tied rows that are the same row: nothing to reorder
        ([(1, 1950, 1950), (1, 1950, 1950), (3, 1970, 1970), (4, 1980, 1980)], False, False),
        # rows 3 and 4 tie across the LIMIT 3
        ([(1, 1950, 1950), (2, 1960, 1960), (3, 1970, 1970), (4, 1970, 1970)], True, False),
    ],
)
def test_split_probe_tells_a_cut_tie_from_an_open_order(rows, cut, open_):
    probe = order_probe(
        check_statement("SELECT person_id, year_of_birth AS y FROM cdm.person ORDER BY y LIMIT 3")
    )
    own, tied, order_open = split_probe(_result(rows), probe)
    assert (tied, order_open) == (cut, open_)
    assert own.columns == ("person_id", "y") and own.num_rows == 3
    assert own.rows() == [row[:2] for row in rows[:3]]


@pytest.mark.parametrize(
    "gold",
    [
        "SELECT person_id FROM cdm.person",  # no ORDER BY
        "SELECT DISTINCT year_of_birth FROM cdm.person ORDER BY 1",  # keys cannot be added
        "SELECT 1 AS a UNION SELECT 2 ORDER BY a",  # a set operation
    ],
)
def test_order_probe_is_only_made_where_the_keys_can_be_appended(gold):
    assert order_probe(check_statement(gold)) is None


@pytest.mark.parametrize(
    ("deterministic", "runs", "status"), [(True, 1, "dropped"), (False, 2, "kept")]
)
def test_the_collation_check_s_keys_cost_no_execution(
    executor, requests, deterministic, runs, status
):
    """A SQL Server gold that groups text and orders by a number that ties: its order
    probe (run in place of the gold, also when no reference rule needs it) gives the
    collation check its tie groups; the check adds only its own run under NOCASE.  With
    the determinism check on, the probe shows the order open and the gold is dropped
    there, with no other run."""
    record = SourceRecord(
        id="r1",
        question="A question.",
        gold_sql="SELECT gender_source_value AS g, year_of_birth AS y, COUNT(*) AS n "
        "FROM cdm.person GROUP BY gender_source_value, year_of_birth ORDER BY y",
        gold_dialect="tsql",
    )
    options = CurationOptions(rules=ReferenceRules(deterministic=deterministic))
    with curation_context(executor, options) as ctx:
        _, verdict = curate_record(record, ctx)
    assert verdict.status == status, verdict.reason
    assert len(requests) == runs, requests
    assert "_tie_k0" in requests[0]  # the probe is the first run, its keys appended
    if runs > 1:
        assert "_tie_k0" not in requests[-1]  # the gold itself, run under NOCASE
