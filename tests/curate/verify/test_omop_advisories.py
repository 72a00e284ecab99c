"""OMOP advisories: each rule on a gold that breaks its convention and one that keeps it;
on the real database, a non-standard concept filter is found and an advisory never drops
a record; the pass has its switch and its place in the report and on the page."""

from __future__ import annotations

import json

import sqlglot
from click.testing import CliRunner

from curate.cli import main
from curate.pipeline import CurationOptions, curate_records
from curate.sources.records import SourceRecord
from curate.verify.omop_advisories import concept_filters, static_advisories

ANCESTOR = (
    "SELECT count(*) FROM cdm.condition_occurrence AS co JOIN cdm.concept_ancestor AS ca "
    "ON {join} WHERE {filter}"
)


def rules(sql: str) -> list[str]:
    return [a.rule for a in static_advisories(sqlglot.parse_one(sql, read="duckdb"))]


def test_source_concepts_walked_through_the_hierarchy_are_advised() -> None:
    bad = ANCESTOR.format(
        join="ca.descendant_concept_id = co.condition_source_concept_id",
        filter="ca.ancestor_concept_id = 201826",
    )
    good = ANCESTOR.format(
        join="ca.descendant_concept_id = co.condition_concept_id",
        filter="ca.ancestor_concept_id = 201826",
    )
    assert rules(bad) == ["source_concept_hierarchy"]
    assert rules(good) == []


def test_a_hierarchy_walked_upwards_is_advised() -> None:
    bad = ANCESTOR.format(
        join="ca.ancestor_concept_id = co.condition_concept_id",
        filter="ca.descendant_concept_id = 201826",
    )
    good = ANCESTOR.format(
        join="ca.descendant_concept_id = co.condition_concept_id",
        filter="ca.ancestor_concept_id = 201826",
    )
    assert rules(bad) == ["ancestor_reversed"]
    assert rules(good) == []


def test_concept_filters_are_the_standard_columns_compared_with_ids() -> None:
    tree = sqlglot.parse_one(
        "SELECT * FROM cdm.condition_occurrence WHERE condition_concept_id IN (1, 2) "
        "AND condition_source_concept_id = 3 AND condition_type_concept_id = 4 "
        "AND visit_concept_id = 9201 AND condition_concept_id <> 0 AND gender_concept_id = 0"
    )
    assert concept_filters(tree) == {
        1: "condition_concept_id",
        2: "condition_concept_id",
        9201: "visit_concept_id",
    }


def curate(executor, gold: str, advisories: bool = True):
    rec = SourceRecord(id="r1", question="Q?", gold_sql=gold, gold_dialect="duckdb")
    options = CurationOptions(advisories=advisories, gold_cache=None)
    _, (verdict,) = curate_records([rec], executor, options)
    return verdict


# 438614 'Allergy to nut' is in the data but not a standard concept of the embedded vocabulary
NON_STANDARD = "SELECT count(*) AS n FROM cdm.observation WHERE observation_concept_id = 438614"
STANDARD = (
    "SELECT count(*) AS n FROM cdm.condition_occurrence WHERE condition_concept_id = 40481087"
)


def test_a_non_standard_concept_filter_is_advised_and_kept(executor) -> None:
    advised = curate(executor, NON_STANDARD)
    assert advised.status == "kept"
    assert [a["rule"] for a in advised.advisories] == ["non_standard_concept"]
    assert "observation_concept_id = 438614" in advised.advisories[0]["reason"]
    assert curate(executor, STANDARD).advisories == ()
    assert curate(executor, NON_STANDARD, advisories=False).advisories == ()


def test_the_concepts_of_every_kept_gold_are_looked_up_by_one_query(executor, monkeypatch):
    from score.execution.executor import Executor

    sent = []
    original = Executor.try_execute

    def counting(self, sql, *args, **kwargs):
        sent.append(sql)
        return original(self, sql, *args, **kwargs)

    monkeypatch.setattr(Executor, "try_execute", counting)
    records = [
        SourceRecord(id=f"r{i}", question="Q?", gold_sql=sql, gold_dialect="duckdb")
        for i, sql in enumerate(
            [NON_STANDARD, STANDARD, NON_STANDARD.replace("= 438614", "IN (438614, 4304110)")]
        )
    ]
    _, verdicts = curate_records(records, executor, CurationOptions(gold_cache=None))
    assert [len(v.advisories) for v in verdicts] == [1, 0, 1]
    lookups = [q for q in sent if "standard_concept" in q]
    assert len(lookups) == 1 and "438614, 4304110, 40481087" in lookups[0]


def test_advisories_reach_the_report_and_the_page(omop_db, tmp_path) -> None:
    source = tmp_path / "advised.jsonl"
    lines = [
        {"format": "sqlgold.source/1", "id": i, "question": "Q?", "gold_sql": sql}
        | {"gold_dialect": "duckdb"}
        for i, sql in (("a", NON_STANDARD), ("b", STANDARD))
    ]
    source.write_text("".join(json.dumps(x) + "\n" for x in lines))
    args = ["curate", str(source), "--db", str(omop_db), "--out", str(tmp_path / "t.jsonl")]
    ran = CliRunner().invoke(main, [*args, "--no-cache"])
    assert ran.exit_code == 0, ran.output
    assert "with advisories: non_standard_concept 1" in ran.output
    report = json.loads((tmp_path / "t_report.json").read_text())
    assert report["counts"]["advisories_by_rule"] == {"non_standard_concept": 1}
    assert report["counts"]["kept"] == 2
    assert "## OMOP advisories on kept tasks" in (tmp_path / "t_report.md").read_text()
    assert "OMOP advisories" in (tmp_path / "t_report.html").read_text()
    off = CliRunner().invoke(main, [*args, "--no-cache", "--no-advisories"])
    assert off.exit_code == 0
    report = json.loads((tmp_path / "t_report.json").read_text())
    assert report["counts"]["advisories_by_rule"] == {}
    assert report["settings"]["advisories"] is False
