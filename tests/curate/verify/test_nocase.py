"""The collation check's case-insensitive run on each engine: DuckDB's NOCASE and
PostgreSQL's twin schema give the same answers, LIKE and searches included."""

from __future__ import annotations

import pytest

from curate.pipeline import CurationOptions, curation_context
from curate.verify.nocase import NocaseExecutor, case_insensitive_searches, nocase_available
from curate.verify.reference_rules import ReferenceRules
from score.comparison.result_hash import result_sha256
from score.execution.executor import Executor
from score.execution.result import QueryResult
from tests.curate.verify.test_collation_check import SORTED_BY_CASE, TIED, verdict_of

#: DuckDB SQL whose result depends on case: each must give DuckDB NOCASE's result on
#: PostgreSQL's twin (and the case-sensitive one on the plain schema).
CASE_DEPENDENT = [
    "SELECT count(*) AS n FROM cdm.concept WHERE vocabulary_id = 'snomed'",
    "SELECT count(*) AS n FROM cdm.concept WHERE concept_name LIKE 'chronic%'",
    "SELECT count(*) AS n FROM cdm.concept WHERE concept_name NOT LIKE '%DISORDER%'",
    "SELECT count(*) AS n FROM cdm.concept WHERE contains(concept_name, 'KIDNEY')",
    "SELECT count(DISTINCT lower(domain_id)) AS d, count(DISTINCT domain_id) AS e "
    "FROM cdm.concept WHERE domain_id IN ('condition', 'Drug')",
]

#: SQL Server that groups 'M' with 'm' (the twin's views carry the collation: a VALUES
#: list's text has none there, so CDM text is grouped).
MERGED = (
    "SELECT g, COUNT(*) AS n FROM (SELECT gender_source_value AS g FROM cdm.person "
    "UNION ALL SELECT LOWER(gender_source_value) FROM cdm.person) AS t GROUP BY g"
)


def test_searches_leave_the_nondeterministic_collation():
    sql = "SELECT 1 FROM t WHERE x NOT LIKE 'a%' ESCAPE '!' AND y ~ 'b' AND STRPOS(z, 'c') > 0"
    out = case_insensitive_searches(sql)
    assert 'x COLLATE "C" NOT ILIKE' in out and "ESCAPE '!'" in out
    assert 'y COLLATE "C" ~*' in out
    assert 'POSITION(LOWER(\'c\' COLLATE "C") IN LOWER(z COLLATE "C"))' in out


@pytest.fixture(scope="module")
def pg(pg_cdm):
    with Executor(pg_cdm.reader_url, sql_dialect="duckdb") as ex:
        yield ex


def _hash(found) -> str:
    assert isinstance(found, QueryResult), found
    return result_sha256(found, ordered=False)


@pytest.mark.parametrize("sql", CASE_DEPENDENT)
def test_the_postgres_twin_ignores_case_as_duckdb_nocase_does(sql, executor, pg):
    duck_nocase, pg_nocase = NocaseExecutor(executor), NocaseExecutor(pg)
    try:
        want = _hash(duck_nocase.try_execute(sql))
        assert _hash(pg_nocase.try_execute(sql)) == want
        assert want != _hash(executor.try_execute(sql))  # the case matters in this data
        assert _hash(pg.try_execute(sql)) == _hash(executor.try_execute(sql))
    finally:
        duck_nocase.close()
        pg_nocase.close()


def test_the_check_runs_where_a_twin_is_there(executor, pg, pg_cdm):
    assert nocase_available(executor) and nocase_available(pg)
    with curation_context(pg) as ctx:
        assert ctx.nocase is not None
    with curation_context(pg, CurationOptions(collation_check=False)) as ctx:
        assert ctx.nocase is None


def test_curation_refuses_an_executor_that_would_run_duckdb_sql_untranslated(pg_cdm):
    """Curation writes DuckDB SQL: a PostgreSQL executor not told so is an error, never
    a run whose golds fail one by one (the cause of 94 kept records in 394)."""
    with Executor(pg_cdm.reader_url) as bare:
        with pytest.raises(ValueError, match="sql_dialect='duckdb'"):
            with curation_context(bare):
                pass


def test_the_twin_leaves_rows_tied_on_the_order_to_the_determinism_check(pg):
    """As on DuckDB (tests/curate/verify/test_collation_check.py): rows the gold's ORDER
    BY ties come in another order on the twin (no case difference: the determinism
    rule's); text sorted or grouped otherwise without case still drops the gold."""
    nocase = NocaseExecutor(pg)
    try:
        plain, twin = pg.execute(TIED).rows(), nocase.try_execute(TIED)
    finally:
        nocase.close()
    assert isinstance(twin, QueryResult) and plain != twin.rows()  # the premise, here
    assert sorted(plain) == sorted(twin.rows())
    assert verdict_of(TIED, pg).rule == "deterministic"  # the first run shows the tie open
    assert verdict_of(TIED, pg, rules=ReferenceRules(deterministic=False)).status == "kept"
    for gold, said in ((SORTED_BY_CASE, "same rows in another order"), (MERGED, "other rows")):
        verdict = verdict_of(gold, pg)
        assert verdict.rule == "case_insensitive_collation" and said in verdict.reason
