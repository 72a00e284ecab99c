"""Local concepts: copies of a gold's concepts that miss one of its vocabulary filters,
checked on the real test database's vocabulary and with DuckDB's own LIKE."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from score.suite.local_concepts import (
    FIRST_LOCAL_ID,
    LocalConcept,
    by_domain,
    like,
    local_concepts_of,
    local_ids,
    local_rows,
    separating_names,
)
from score.suite.neighbours import altered_patterns
from score.suite.value_pool import gold_constants

CLINICAL_DRUG = (
    "SELECT count(*) FROM cdm.drug_exposure d JOIN cdm.concept c "
    "ON c.concept_id = d.drug_concept_id "
    "WHERE c.vocabulary_id = 'RxNorm' AND c.concept_class_id = 'Clinical Drug'"
)


@pytest.fixture()
def vocabulary(omop_db: Path):
    con = duckdb.connect(str(omop_db), read_only=True)
    con.execute("USE cdm")
    yield con
    con.close()


def _filters(sql: str) -> list[dict]:
    import datetime as dt

    return gold_constants([sql], today=dt.date(2024, 1, 1))[2]


@pytest.mark.parametrize(
    "pattern", ["%biopsy%", "Allergy to%", "insulin%", "%ige ab%", "%a_c", "x", "%"]
)
def test_each_near_miss_of_a_pattern_gets_a_name_that_only_one_of_them_matches(pattern):
    con = duckdb.connect()
    names = separating_names(pattern)
    for near in altered_patterns(pattern):
        told = [
            n
            for n in names
            if con.execute("SELECT ? LIKE ?, ? LIKE ?", [n, pattern, n, near]).fetchall()[0]
            in ((True, False), (False, True))
        ]
        assert told, (pattern, near, names)
    for n in names:  # the Python matcher agrees with DuckDB's LIKE
        for p in [pattern, *altered_patterns(pattern)]:
            assert like(p, n) == con.execute("SELECT ? LIKE ?", [n, p]).fetchall()[0][0]
    con.close()


def test_a_copy_misses_one_filter_of_the_gold_and_keeps_the_others(vocabulary):
    wanted = local_concepts_of(vocabulary, _filters(CLINICAL_DRUG))
    assert {c.column for c in wanted} == {"vocabulary_id", "concept_class_id"}
    ids = local_ids(wanted)
    assert sorted(ids.values()) == list(range(FIRST_LOCAL_ID, FIRST_LOCAL_ID + len(wanted)))
    added = local_rows(vocabulary, ids)
    concepts, ancestry = added["concept"], added["concept_ancestor"]
    assert [v["vocabulary_id"] for v in added["vocabulary"]] == ["Local"]
    assert len(concepts) == len(wanted)
    base = vocabulary.sql("SELECT * FROM concept").to_arrow_table()
    table = pa.concat_tables([base, pa.Table.from_pylist(concepts, schema=base.schema)])
    con = duckdb.connect()
    con.register("concept", table)
    rows = con.execute(
        "SELECT vocabulary_id = 'RxNorm', concept_class_id = 'Clinical Drug', count(*) "
        "FROM concept WHERE concept_id >= ? GROUP BY ALL ORDER BY ALL",
        [FIRST_LOCAL_ID],
    ).fetchall()
    # half miss the vocabulary filter only, half the class filter only
    assert [r[:2] for r in rows] == [(False, True), (True, False)]
    assert (
        con.execute(
            "SELECT count(*) FROM concept WHERE vocabulary_id <> 'RxNorm' "
            "AND concept_class_id = 'Clinical Drug'"
        ).fetchall()[0][0]
        == rows[0][2]
    )
    # a vocabulary's code names one concept, in the form of its template's code
    assert con.execute(
        "SELECT count(*) FROM (SELECT vocabulary_id, concept_code FROM concept "
        "GROUP BY ALL HAVING count(*) > 1)"
    ).fetchall() == [(0,)]
    for row in concepts:
        template = next(c for c in wanted if ids[c] == row["concept_id"]).template
        code = vocabulary.execute(
            "SELECT concept_code FROM concept WHERE concept_id = ?", [template]
        ).fetchall()[0][0]
        assert len(row["concept_code"]) == len(code)
        assert sum(a != b for a, b in zip(row["concept_code"], code, strict=True)) <= 1
    con.close()
    for c, concept_id in ids.items():  # below its template, its own ancestor
        below = {
            (a["ancestor_concept_id"], a["min_levels_of_separation"])
            for a in ancestry
            if a["descendant_concept_id"] == concept_id
        }
        assert (c.template, 1) in below and (concept_id, 0) in below


def test_a_like_on_names_gets_copies_named_for_each_near_miss(vocabulary):
    gold = (
        "SELECT count(*) FROM cdm.specimen s JOIN cdm.concept c "
        "ON c.concept_id = s.specimen_concept_id WHERE LOWER(c.concept_name) LIKE '%biopsy%'"
    )
    wanted = local_concepts_of(vocabulary, _filters(gold))
    assert wanted and {c.column for c in wanted} == {"concept_name"}
    assert {c.value for c in wanted} == set(separating_names("%biopsy%"))
    templates = {c.template for c in wanted}
    names = vocabulary.execute(
        "SELECT lower(concept_name) FROM concept WHERE concept_id IN (SELECT UNNEST(?::BIGINT[]))",
        [sorted(templates)],
    ).fetchall()
    assert all("biopsy" in n for (n,) in names)  # copies of concepts the gold selects


def test_the_same_gold_gives_the_same_concepts_and_ids_and_none_without_a_filter(vocabulary):
    one = local_ids(local_concepts_of(vocabulary, _filters(CLINICAL_DRUG)))
    two = local_ids(reversed(local_concepts_of(vocabulary, _filters(CLINICAL_DRUG))))
    assert one == two
    assert local_concepts_of(vocabulary, _filters("SELECT count(*) FROM cdm.person")) == []
    assert local_ids([]) == {}
    assert local_rows(vocabulary, {}) == {}
    assert LocalConcept(1, "a", "b") < LocalConcept(2, "a", "a")


def test_a_named_concept_gets_a_child_and_a_grandchild_reached_by_two_paths(vocabulary):
    gold = "SELECT count(*) FROM cdm.condition_occurrence WHERE condition_concept_id = 201826"
    import datetime as dt

    _, named, filters = gold_constants([gold], today=dt.date(2024, 1, 1))
    wanted = local_concepts_of(vocabulary, filters, named)
    assert sorted((c.template, c.column, c.levels, c.lateral) for c in wanted) == [
        (201826, "concept_name", 0, False),
        (201826, "concept_name", 0, True),
        (201826, "concept_name", 1, False),
        (201826, "concept_name", 2, False),
    ]
    ids = local_ids(wanted)
    added = local_rows(vocabulary, ids)
    source, lateral, child, grandchild = (
        ids[c] for c in sorted(wanted, key=lambda c: (c.levels, c.lateral))
    )
    assert grandchild < child  # ties on the least levels fall the other way
    assert {
        (
            r["ancestor_concept_id"],
            r["descendant_concept_id"],
            r["min_levels_of_separation"],
            r["max_levels_of_separation"],
        )
        for r in added["concept_ancestor"]
    } == {
        (201826, child, 1, 1),
        (child, child, 0, 0),
        (201826, grandchild, 1, 2),  # directly under it, and under its child
        (child, grandchild, 1, 1),
        (grandchild, grandchild, 0, 0),
        (201826, lateral, 0, 0),  # beside it: another concept, no level between them
        (lateral, lateral, 0, 0),
    }
    assert {
        (r["concept_id_1"], r["concept_id_2"], r["relationship_id"])
        for r in added["concept_relationship"]
    } == {
        (child, 201826, "Is a"),
        (201826, child, "Subsumes"),
        (child, child, "Maps to"),
        (grandchild, 201826, "Is a"),
        (201826, grandchild, "Subsumes"),
        (grandchild, child, "Is a"),
        (child, grandchild, "Subsumes"),
        (grandchild, grandchild, "Maps to"),
        (source, 201826, "Maps to"),  # a source concept, in no hierarchy
        (201826, source, "Mapped from"),
        (lateral, lateral, "Maps to"),
    }
    names = {r["concept_id"]: r["concept_name"] for r in added["concept"]}
    assert names[child].endswith(" (local)") and names[grandchild].endswith(" two levels)")
    standard = {r["concept_id"]: r["standard_concept"] for r in added["concept"]}
    assert standard == {child: "S", grandchild: "S", lateral: "S", source: None}
    # clinical rows take the standard ones only
    assert by_domain(wanted, ids, {201826: "Condition"}) == {
        "Condition": sorted([grandchild, child, lateral])
    }
    # the least and the greatest levels of separation now tell two queries apart
    con = duckdb.connect()
    con.register("ca", pa.Table.from_pylist(added["concept_ancestor"]))
    by = "SELECT descendant_concept_id FROM ca WHERE ancestor_concept_id = 201826 ORDER BY {}"
    least = con.execute(by.format("min_levels_of_separation, descendant_concept_id")).fetchall()
    most = con.execute(by.format("max_levels_of_separation, descendant_concept_id")).fetchall()
    assert least != most
    # level 0 is not the concept itself: 'a = d AND level 0' is told from either alone
    self_rows = "SELECT count(*) FROM ca WHERE ancestor_concept_id = 201826 AND ({})"
    told = [
        con.execute(self_rows.format(w)).fetchall()[0][0]
        for w in (
            "ancestor_concept_id = descendant_concept_id",
            "min_levels_of_separation = 0",
            "ancestor_concept_id = descendant_concept_id OR min_levels_of_separation = 0",
        )
    ]
    assert told[0] != told[1] and told[0] != told[2]
    con.close()


def test_a_domain_filter_gets_a_copy_of_another_domain_that_its_clinical_rows_still_use(
    vocabulary,
):
    # omop-082's gold: condition concepts named '%sinusitis%' (its near miss drops the
    # domain); the copy is a concept of another domain the gold's table still records
    gold = (
        "SELECT COUNT(DISTINCT co.person_id) FROM cdm.condition_occurrence co "
        "WHERE co.condition_concept_id IN (SELECT concept_id FROM cdm.concept "
        "WHERE domain_id = 'Condition' AND LOWER(concept_name) LIKE '%sinusitis%')"
    )
    wanted = local_concepts_of(vocabulary, _filters(gold))
    moved = [c for c in wanted if c.column == "domain_id"]
    assert moved and all(c.value != "Condition" for c in moved)
    ids = local_ids(wanted)
    added = {r["concept_id"]: r for r in local_rows(vocabulary, ids)["concept"]}
    for c in moved:
        row = added[ids[c]]
        assert row["domain_id"] == c.value and "sinusitis" in row["concept_name"].lower()
    domains = dict(vocabulary.execute("SELECT concept_id, domain_id FROM concept").fetchall())
    assert {ids[c] for c in moved} <= set(by_domain(wanted, ids, domains)["Condition"])


def test_a_date_filter_gets_copies_a_day_either_side_of_its_date(vocabulary):
    # omop-324's gold counts concepts that end before 2099-12-31; '< 2099-12-30' misses
    gold = "SELECT COUNT(*) FROM cdm.concept WHERE valid_end_date < '2099-12-31'"
    wanted = local_concepts_of(vocabulary, _filters(gold))
    assert {c.value for c in wanted} == {"2099-12-30", "2100-01-01"}
    assert {c.column for c in wanted} == {"valid_end_date"}
    rows = local_rows(vocabulary, local_ids(wanted))["concept"]
    assert sorted({r["valid_end_date"].isoformat() for r in rows}) == ["2099-12-30", "2100-01-01"]
    base = vocabulary.sql("SELECT * FROM concept").to_arrow_table()
    con = duckdb.connect()
    con.register(
        "concept", pa.concat_tables([base, pa.Table.from_pylist(rows, schema=base.schema)])
    )
    told = con.execute(
        "SELECT (SELECT count(*) FROM concept WHERE valid_end_date < '2099-12-31'), "
        "(SELECT count(*) FROM concept WHERE valid_end_date < '2099-12-30')"
    ).fetchall()[0]
    assert told[0] != told[1]
    con.close()
    # with another filter, that one picks the templates and the date only adds copies
    both = local_concepts_of(
        vocabulary,
        _filters(
            "SELECT count(*) FROM cdm.concept WHERE vocabulary_id = 'RxNorm' "
            "AND valid_start_date >= '1970-01-01'"
        ),
    )
    assert {c.column for c in both} == {"vocabulary_id", "valid_start_date"}
    rxnorm = {
        r[0]
        for r in vocabulary.execute(
            "SELECT concept_id FROM concept WHERE vocabulary_id = 'RxNorm'"
        ).fetchall()
    }
    assert {c.template for c in both} <= rxnorm


def test_the_variants_vocabulary_holds_the_base_rows_last_to_first(omop_db):
    # a near miss that leaves a tie to the order rows are stored in (ORDER BY a level
    # where its gold orders by level, then id) meets every tied pair the other way round
    import datetime as dt

    from score.suite.base_data import read_base

    gold = {
        "id": "t1",
        "gold_sql": "SELECT descendant_concept_id FROM cdm.concept_ancestor "
        "WHERE ancestor_concept_id = 4249893 ORDER BY min_levels_of_separation, 1",
    }
    vocabulary = read_base(omop_db, None, [gold], dt.date(2024, 1, 1))[3]
    con = duckdb.connect(str(omop_db), read_only=True)
    base = con.sql("SELECT * FROM cdm.concept").to_arrow_table()
    con.close()
    shared = vocabulary["concept"]
    added = shared.num_rows - base.num_rows  # the named concept's local family
    assert added == 4  # child, grandchild, lateral, source
    assert shared.to_pylist()[added:] == base.to_pylist()[::-1]
    assert [r["concept_id"] for r in shared.to_pylist()[:added]] == [
        FIRST_LOCAL_ID + n for n in (3, 2, 1, 0)
    ]
    ancestry = vocabulary["concept_ancestor"].to_pylist()
    locals_ = [r["descendant_concept_id"] for r in ancestry if r["ancestor_concept_id"] == 4249893]
    # the local child and grandchild come first, the highest id first
    assert locals_[:2] == sorted(locals_[:2], reverse=True) and min(locals_[:2]) >= FIRST_LOCAL_ID


def test_the_suites_own_domain_and_class_have_no_concept(omop_db):
    # omop-313: domains with their number of concepts, 0 included; the inner join drops
    # a domain without concepts, which the embedded vocabulary lacks
    import datetime as dt

    from score.suite.base_data import read_base

    gold = "SELECT count(*) FROM cdm.procedure_occurrence WHERE procedure_concept_id = 4249893"
    vocabulary = read_base(omop_db, None, [{"id": "t1", "gold_sql": gold}], dt.date(2024, 1, 1))[3]
    con = duckdb.connect()
    for table in ("concept", "domain", "concept_class", "vocabulary"):
        con.register(table, vocabulary[table])
    left, inner = (
        con.execute(
            f"SELECT d.domain_id, count(c.concept_id) FROM domain d {join} JOIN concept c "
            "ON c.domain_id = d.domain_id GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        for join in ("LEFT", "INNER")
    )
    assert set(left) - set(inner) == {("Local", 0)}
    for table, key in (("concept_class", "concept_class_id"), ("vocabulary", "vocabulary_id")):
        unused = con.execute(
            f"SELECT {key} FROM {table} t WHERE NOT EXISTS "
            f"(SELECT 1 FROM concept c WHERE c.{key} = t.{key} AND c.concept_id < ?)",
            [FIRST_LOCAL_ID],
        ).fetchall()
        assert ("Local",) in unused
    con.close()
