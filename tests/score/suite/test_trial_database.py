"""Candidates tried in memory: every CDM table with its CDM types, the vocabulary kept
across loads, a time limit and a row cap that end a query with an error, not a hang."""

from __future__ import annotations

import pyarrow as pa

from score.execution.result import QueryError, QueryResult
from score.suite.trial_database import TrialDatabase

CONCEPTS = pa.table(
    {
        "concept_id": pa.array([8507, 8532], pa.int32()),
        "concept_name": ["MALE", "FEMALE"],
        "domain_id": ["Gender", "Gender"],
        "vocabulary_id": ["Gender", "Gender"],
        "concept_class_id": ["Gender", "Gender"],
        "concept_code": ["M", "F"],
        "valid_start_date": pa.array([0, 0], pa.date32()),
        "valid_end_date": pa.array([0, 0], pa.date32()),
    }
)


def _persons(genders: list[int]) -> pa.Table:
    n = len(genders)
    return pa.table(
        {
            "person_id": pa.array(range(1, n + 1), pa.int32()),
            "gender_concept_id": pa.array(genders, pa.int32()),
            "year_of_birth": pa.array([1950] * n, pa.int32()),
            "race_concept_id": pa.array([0] * n, pa.int32()),
            "ethnicity_concept_id": pa.array([0] * n, pa.int32()),
        }
    )


def test_loads_replace_the_clinical_rows_and_keep_the_vocabulary() -> None:
    trial = TrialDatabase({"concept": CONCEPTS}, timeout_seconds=5, max_rows=100)
    try:
        sql = (
            "SELECT c.concept_name, count(*) AS n FROM cdm.person p JOIN cdm.concept c "
            "ON c.concept_id = p.gender_concept_id GROUP BY 1 ORDER BY 1"
        )
        trial.load({"person": _persons([8507, 8507, 8532])})
        first = trial.run(sql)
        assert isinstance(first, QueryResult) and first.rows() == [("FEMALE", 1), ("MALE", 2)]
        trial.load({"person": _persons([8532])})
        assert trial.run(sql).rows() == [("FEMALE", 1)]
        empty = trial.run("SELECT count(*) FROM cdm.death")  # every CDM table is there
        assert empty.rows() == [(0,)]
        assert trial.run("SELECT typeof(year_of_birth) FROM cdm.person").rows() == [("INTEGER",)]
    finally:
        trial.close()


def test_a_query_past_its_limits_is_an_error() -> None:
    trial = TrialDatabase({}, timeout_seconds=0.5, max_rows=10)
    try:
        capped = trial.run("SELECT * FROM range(11)")
        assert isinstance(capped, QueryError) and capped.kind == "row_cap"
        slow = trial.run("SELECT count(*) FROM range(100000000000) a")
        assert isinstance(slow, QueryError) and slow.kind == "timeout"
        failed = trial.run("SELECT no_such_column FROM cdm.person")
        assert isinstance(failed, QueryError)
        assert trial.run("SELECT 1 AS x").rows() == [(1,)]  # the connection is fine after
    finally:
        trial.close()
