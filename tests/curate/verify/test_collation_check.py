"""The collation check on the embedded DuckDB database judges row order as the
determinism check does: rows the gold's own ORDER BY ties may come in another order
under NOCASE (that is no case difference, but a second run whose ties fall otherwise:
rule ``deterministic``, off with the determinism check); rows sorted or grouped
otherwise because case is ignored still drop the gold (rule
``case_insensitive_collation``), in curation and in ``sqlgold verify`` alike."""

from __future__ import annotations

from collections import Counter

from click.testing import CliRunner

from curate.cli import main
from curate.pipeline import CurationOptions, curate_record, curation_context
from curate.sources.records import SourceRecord
from curate.verify.nocase import NocaseExecutor
from curate.verify.reference_rules import ReferenceRules
from score.cli.exit_codes import FOUND_DIFFERENT
from score.execution.result import QueryResult

RULE = "case_insensitive_collation"

#: QueryLibrary CO23's pattern: text grouped (a collation warning), rows ordered by a
#: number that ties (several genders per year of birth).  DuckDB's NOCASE groups text
#: by another hash, so the tied rows come out in another order.
TIED = (
    "SELECT gender_source_value AS g, year_of_birth AS y, COUNT(*) AS n FROM cdm.person "
    "GROUP BY gender_source_value, year_of_birth ORDER BY y"
)
#: 'CVX' sorts before 'Condition Type' with case, after it without.
SORTED_BY_CASE = (
    "SELECT vocabulary_id, COUNT(*) AS n FROM cdm.concept GROUP BY vocabulary_id "
    "ORDER BY vocabulary_id"
)
#: The same with ties (several domains per vocabulary) around the case difference.
SORTED_BY_CASE_WITH_TIES = (
    "SELECT vocabulary_id, domain_id, COUNT(*) AS n FROM cdm.concept "
    "GROUP BY vocabulary_id, domain_id ORDER BY vocabulary_id"
)
#: 'x' and 'X' are one group without case.
MERGED_BY_CASE = (
    "SELECT code, COUNT(*) AS n FROM (VALUES ('x'), ('X'), ('y')) AS t(code) "
    "GROUP BY code ORDER BY n DESC, code"
)


def verdict_of(gold: str, executor, **options):
    record = SourceRecord(id="c1", question="A question.", gold_sql=gold, gold_dialect="tsql")
    with curation_context(executor, CurationOptions(**options)) as ctx:
        return curate_record(record, ctx)[1]


def _nocase_run(executor, sql: str) -> QueryResult:
    nocase = NocaseExecutor(executor)
    try:
        found = nocase.try_execute(sql)
    finally:
        nocase.close()
    assert isinstance(found, QueryResult), found
    return found


def test_the_planted_gold_s_tied_rows_do_come_in_another_order_under_nocase(executor):
    """The premise of the next test, on this data: the same rows, each year's in the
    same place, but not in the same order."""
    plain, nocase = executor.execute(TIED).rows(), _nocase_run(executor, TIED).rows()
    assert plain != nocase
    assert Counter(plain) == Counter(nocase)
    assert [y for _, y, _ in plain] == [y for _, y, _ in nocase]


def test_tied_rows_in_another_order_are_no_case_difference(executor):
    """Its order is open on the first run already: the determinism rule's drop, before
    any collation check."""
    verdict = verdict_of(TIED, executor)
    assert (verdict.stage, verdict.rule) == ("verify", "deterministic"), verdict.reason
    assert "leaves rows that differ tied" in verdict.reason


def test_ties_are_told_apart_without_the_determinism_check(executor):
    """The order probe runs for the collation check's keys even when no reference rule
    needs it; with the determinism check off, tied rows' order is nobody's business."""
    no_second_run = ReferenceRules(deterministic=False)
    assert verdict_of(TIED, executor, rules=no_second_run).status == "kept"


def test_text_sorted_otherwise_without_case_is_still_dropped(executor):
    verdict = verdict_of(SORTED_BY_CASE, executor)
    assert (verdict.stage, verdict.rule) == ("verify", RULE)
    assert "same rows in another order" in verdict.reason
    assert "('CVX', 18)" in verdict.reason and "('Condition Type', 2)" in verdict.reason
    assert "ties" not in verdict.reason  # no two rows tie on vocabulary_id here


def test_text_sorted_otherwise_around_ties_is_still_dropped(executor):
    rules = ReferenceRules(deterministic=False)  # the ties here also vary run to run
    verdict = verdict_of(SORTED_BY_CASE_WITH_TIES, executor, rules=rules)
    assert (verdict.stage, verdict.rule) == ("verify", RULE)
    assert "same rows in another order" in verdict.reason
    assert "rows its ORDER BY ties taken in any order" in verdict.reason


def test_case_variants_merged_by_a_group_by_are_still_dropped(executor):
    verdict = verdict_of(MERGED_BY_CASE, executor)
    assert (verdict.stage, verdict.rule) == ("verify", RULE)
    assert "other rows" in verdict.reason and "2 rows, gold 3" in verdict.reason


def test_verify_judges_the_gold_as_curation_does(omop_db):
    def verify(gold: str):
        return CliRunner().invoke(main, ["verify", "--db", str(omop_db), "--gold", gold])

    tied = verify(TIED)
    assert tied.exit_code == FOUND_DIFFERENT, tied.output
    assert "verify/deterministic" in tied.output and RULE not in tied.output
    for gold in (SORTED_BY_CASE, MERGED_BY_CASE):
        dropped = verify(gold)
        assert dropped.exit_code == FOUND_DIFFERENT, dropped.output
        assert f"verify/{RULE}" in dropped.output
