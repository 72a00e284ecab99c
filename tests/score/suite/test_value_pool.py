"""The values a variant is made of: the golds' constants with their neighbours, and the
base database's own values and concepts."""

from __future__ import annotations

import datetime as dt
import random

import duckdb
from sqlglot import parse_one

from score.suite import value_pool
from score.suite.distill import Distillation
from score.suite.focus import focus_of
from score.suite.variant_data import EVENT_TABLES, Palette, variant_rows

TODAY = dt.date(2026, 1, 1)


def test_the_constants_of_a_gold_and_their_neighbours() -> None:
    pools, concepts, filters = value_pool.gold_constants(
        [
            "SELECT count(*) FROM cdm.person p JOIN cdm.condition_occurrence co "
            "ON co.person_id = p.person_id "
            "JOIN cdm.concept c ON c.concept_id = co.condition_concept_id "
            "WHERE p.year_of_birth >= 1950 AND co.condition_start_date < '2018-01-01' "
            "AND co.condition_concept_id IN (201826, 4329847) AND c.vocabulary_id = 'SNOMED' "
            "AND c.concept_name LIKE '%itis' AND YEAR(co.condition_end_date) = 2017"
        ],
        today=TODAY,
    )
    assert pools[("person", "year_of_birth")] == [1950, 1949, 1951]
    assert pools[("condition_occurrence", "condition_start_date")] == [
        dt.date(2018, 1, 1),
        dt.date(2017, 12, 31),
        dt.date(2018, 1, 2),
    ]
    assert dt.date(2017, 12, 31) in pools[("condition_occurrence", "condition_end_date")]
    assert dt.date(2018, 1, 1) in pools[("condition_occurrence", "condition_end_date")]
    assert {201826, 4329847} <= concepts
    like = pools[("concept", "concept_name")]
    assert "itis" in like and any(not v.endswith("itis") for v in like)
    assert {"column": "vocabulary_id", "value": "SNOMED", "like": False} in filters


def test_a_day_relative_to_today_is_a_constant_of_the_golds_own_today() -> None:
    """A window ending at the current date (TEXT-TO-OMOP's "in the last three months")
    gives the day it starts on, computed with each gold's own today, and its neighbours."""
    golds = [
        "SELECT count(*) FROM cdm.drug_exposure de "
        "WHERE de.drug_exposure_start_date >= CURRENT_DATE - INTERVAL '3' MONTH",
        "SELECT count(*) FROM cdm.visit_occurrence v WHERE v.visit_start_date "
        "BETWEEN DATE_TRUNC('YEAR', now()) - INTERVAL '1' DAY AND CURRENT_DATE",
    ]
    pools, _, _ = value_pool.gold_constants(golds, today=TODAY, todays=[None, dt.date(2025, 6, 30)])
    assert pools[("drug_exposure", "drug_exposure_start_date")] == [
        dt.date(2025, 10, 1),
        dt.date(2025, 9, 30),
        dt.date(2025, 10, 2),
    ]
    assert {dt.date(2024, 12, 31), dt.date(2025, 6, 30)} <= set(
        pools[("visit_occurrence", "visit_start_date")]
    )


def test_only_date_arithmetic_is_computed() -> None:
    """A constant that reads a table or calls anything but date arithmetic is not run."""
    for sql in (
        "CURRENT_DATE - (SELECT count(*) FROM cdm.person)",
        "CURRENT_DATE - LENGTH(getenv('HOME'))",
        "CAST(read_text('/etc/hostname') AS DATE) - CURRENT_DATE",
        "v.visit_start_date - INTERVAL '1' DAY",
    ):
        assert value_pool.today_relative(parse_one(sql, read="duckdb"), TODAY) is None, sql
    assert value_pool.today_relative(parse_one("CURRENT_DATE", read="duckdb"), TODAY) == (
        "2026-01-01"
    )


def test_an_age_threshold_puts_birth_years_on_either_side() -> None:
    pools, _, _ = value_pool.gold_constants(
        ["SELECT count(*) FROM cdm.person WHERE 2026 - year_of_birth >= 65"], today=TODAY
    )
    assert {1960, 1961, 1962} <= set(pools[("person", "year_of_birth")])


def test_concepts_a_filter_selects_and_some_it_does_not(omop_db) -> None:
    con = duckdb.connect(str(omop_db), read_only=True)
    con.execute("SET schema = 'cdm'")  # as suite build does (the found CDM schema)
    try:
        related = value_pool.related_concepts(
            con, set(), [{"column": "vocabulary_id", "value": "RxNorm", "like": False}]
        )
        vocabularies = {
            v
            for (v,) in con.execute(
                "SELECT DISTINCT vocabulary_id FROM cdm.concept WHERE concept_id IN "
                f"({', '.join(str(i) for i in related['Drug'])})"
            ).fetchall()
        }
    finally:
        con.close()
    assert "RxNorm" in vocabularies and len(vocabularies) > 1


def test_a_named_domain_brings_the_bases_concepts_of_it_in_each_column_read(omop_db) -> None:
    gold = (
        "SELECT c.concept_id, COUNT(*) FROM cdm.procedure_occurrence po JOIN cdm.concept c "
        "ON c.concept_id = po.procedure_concept_id WHERE c.domain_id = 'Measurement' "
        "GROUP BY c.concept_id"
    )
    con = duckdb.connect(str(omop_db), read_only=True)
    con.execute("SET schema = 'cdm'")
    try:
        base = value_pool.base_pools(con, ["procedure_occurrence"])
        domains = value_pool.concept_domains(con, base)
        known = {r[0] for r in con.execute("SELECT concept_id FROM concept").fetchall()}
        focus = focus_of(con, gold, TODAY, base, domains, known)
        found = focus[("procedure_occurrence", "procedure_concept_id")]
        kinds = con.execute(
            "SELECT DISTINCT domain_id FROM concept WHERE concept_id IN "
            f"({', '.join(str(i) for i in found)})"
        ).fetchall()
        used = con.execute(
            "SELECT count(DISTINCT procedure_concept_id) FROM procedure_occurrence WHERE "
            f"procedure_concept_id IN ({', '.join(str(i) for i in found)})"
        ).fetchall()[0][0]
    finally:
        con.close()
    # the base's own procedures coded in the named domain, which its most frequent lack
    assert kinds == [("Measurement",)] and used == len(found) > 0
    assert not set(found) & set(base[("procedure_occurrence", "procedure_concept_id")])


def test_a_count_of_persons_gives_a_crowd_of_that_many_on_one_concept() -> None:
    gold = (
        "SELECT c.concept_id FROM cdm.concept c LEFT JOIN cdm.drug_exposure de "
        "ON de.drug_concept_id = c.concept_id GROUP BY c.concept_id "
        "HAVING COUNT(DISTINCT de.person_id) < 200"
    )
    pools, _, _ = value_pool.gold_constants([gold], today=TODAY)
    assert sorted(pools[value_pool.PERSONS]) == [199, 200, 201]
    # COUNT(*) per person is no count of persons
    other = "SELECT person_id FROM cdm.visit_occurrence GROUP BY person_id HAVING COUNT(*) >= 20"
    assert value_pool.PERSONS not in value_pool.gold_constants([other], today=TODAY)[0]
    base = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("drug_exposure", "drug_exposure_start_date"): [dt.date(2012, 1, 1)],
        ("drug_exposure", "drug_concept_id"): [11, 12, 13],
        ("person", "year_of_birth"): [1950],
    }
    focus = {
        value_pool.PERSONS: [199, 200, 201],
        ("drug_exposure", "drug_concept_id"): [11, 12],
    }
    tables = ["person", "observation_period", "drug_exposure"]
    sizes = set()
    for n in range(20):
        rows = variant_rows(base, tables, f"0:{n}", focus)
        by_concept: dict[int, set[int]] = {}
        for r in rows["drug_exposure"]:
            by_concept.setdefault(r["drug_concept_id"], set()).add(r["person_id"])
        periods = {r["person_id"] for r in rows["observation_period"]}
        assert {r["person_id"] for r in rows["drug_exposure"]} <= periods
        assert len({r["person_id"] for r in rows["person"]}) == len(rows["person"])
        sizes |= {len(p) for p in by_concept.values()} & {199, 200, 201}
    assert len(sizes) >= 2  # exactly that many persons on a concept, in several variants


def test_a_variant_is_consistent_and_the_same_for_the_same_seed() -> None:
    pools = {
        ("person", "year_of_birth"): [1950, 1949, 1951],
        ("person", "gender_concept_id"): [8507, 8532],
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("condition_occurrence", "condition_start_date"): [
            dt.date(2005, 1, 1),
            dt.date(2015, 1, 1),
        ],
        ("visit_occurrence", "visit_start_date"): [dt.date(2012, 3, 3)],
    }
    tables = ["person", "observation_period", "visit_occurrence", "condition_occurrence", "death"]
    one = variant_rows(pools, tables, "0:1")
    assert one == variant_rows(pools, tables, "0:1")
    assert one != variant_rows(pools, tables, "0:2")
    by_person: dict[int, list[tuple[dt.date, dt.date]]] = {}
    for r in one["observation_period"]:
        span = (r["observation_period_start_date"], r["observation_period_end_date"])
        by_person.setdefault(r["person_id"], []).append(span)
    assert set(by_person) <= {p["person_id"] for p in one["person"]}
    for spans in by_person.values():  # a person's periods never overlap
        spans.sort()
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:], strict=False))
    visits = {v["visit_occurrence_id"]: v for v in one["visit_occurrence"]}
    for row in one["condition_occurrence"]:
        if row["person_id"] not in by_person:
            continue  # a person with no observation period, as in the base database
        day = row["condition_start_date"]
        assert any(a <= day <= b for a, b in by_person[row["person_id"]])  # inside a period
        if row["visit_occurrence_id"] is not None:
            visit = visits[row["visit_occurrence_id"]]
            assert visit["person_id"] == row["person_id"]
            assert visit["visit_start_date"] <= row["condition_start_date"]
    assert {r["year_of_birth"] for r in one["person"]} <= {1950, 1949, 1951}
    assert "condition_occurrence" in {t for t, _, _ in EVENT_TABLES}


def test_variants_store_rows_out_of_id_order_and_some_persons_have_two_periods() -> None:
    pools = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("visit_occurrence", "visit_start_date"): [dt.date(2012, 3, 3), dt.date(2013, 3, 3)],
    }
    tables = ["person", "observation_period", "visit_occurrence"]
    shuffled = two = 0
    for n in range(20):
        rows = variant_rows(pools, tables, f"0:{n}")
        ids = [r["visit_occurrence_id"] for r in rows["visit_occurrence"]]
        shuffled += ids != sorted(ids)
        people = [r["person_id"] for r in rows["observation_period"]]
        two += len(people) > len(set(people))
    assert shuffled > 10 and two > 10


def test_some_persons_have_events_in_their_later_period() -> None:
    pools = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2012, 1, 1)],
        ("visit_occurrence", "visit_start_date"): [dt.date(2011, 3, 3)],
        ("device_exposure", "device_exposure_start_date"): [
            dt.date(2011, 1, 1),
            dt.date(2030, 1, 1),
        ],
    }
    tables = ["person", "observation_period", "visit_occurrence", "device_exposure"]
    later = first_only = 0
    for n in range(30):
        rows = variant_rows(pools, tables, f"0:{n}")
        periods: dict[int, list[tuple[dt.date, dt.date]]] = {}
        for r in sorted(
            rows["observation_period"], key=lambda r: r["observation_period_start_date"]
        ):
            span = (r["observation_period_start_date"], r["observation_period_end_date"])
            periods.setdefault(r["person_id"], []).append(span)
        for person, spans in periods.items():
            days = [
                r["device_exposure_start_date"]
                for r in rows["device_exposure"]
                if r["person_id"] == person
            ]
            if len(spans) < 2 or not days:
                continue
            assert all(any(a <= d <= b for a, b in spans) for d in days)
            # past the end of the first period: MIN and MAX of the period ends differ
            if any(d > spans[0][1] for d in days):
                later += 1
            else:
                first_only += 1
    assert later > 3 and first_only > 3


def test_ids_run_against_the_persons_in_some_variants_and_visits_follow() -> None:
    pools = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("visit_occurrence", "visit_start_date"): [dt.date(2012, 3, 3)],
        ("condition_occurrence", "condition_start_date"): [dt.date(2013, 1, 1)],
        ("condition_era", "condition_era_start_date"): [dt.date(2013, 1, 1)],
    }
    tables = ["person", "observation_period", "visit_occurrence", "condition_occurrence"]
    tables.append("condition_era")
    against = same_length = 0
    eras = set()
    for n in range(30):
        rows = variant_rows(pools, tables, f"0:{n}")
        by_id = sorted(rows["observation_period"], key=lambda r: r["observation_period_id"])
        persons = [r["person_id"] for r in by_id]
        against += persons != sorted(persons)
        visits = {v["visit_occurrence_id"]: v for v in rows["visit_occurrence"]}
        assert len(visits) == len(rows["visit_occurrence"])  # ids stay unique
        for row in rows["condition_occurrence"]:
            if row["visit_occurrence_id"] is not None:  # the reference follows its visit
                visit = visits[row["visit_occurrence_id"]]
                assert visit["person_id"] == row["person_id"]
                assert visit["visit_start_date"] <= row["condition_start_date"]
        lengths: dict[int, list[dt.timedelta]] = {}
        for r in rows["observation_period"]:
            length = r["observation_period_end_date"] - r["observation_period_start_date"]
            lengths.setdefault(r["person_id"], []).append(length)
        same_length += any(len(v) == 2 and v[0] == v[1] for v in lengths.values())
        per_person: dict[int, int] = {}
        for r in rows["condition_era"]:
            per_person[r["person_id"]] = per_person.get(r["person_id"], 0) + 1
        eras |= set(per_person.values())
    assert 5 < against < 25 and same_length > 3 and max(eras) >= 3


def test_some_deaths_fall_on_the_day_of_an_event_with_events_after() -> None:
    pools = {
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
        ("condition_occurrence", "condition_start_date"): [
            dt.date(2012, 1, 1),
            dt.date(2014, 1, 1),
        ],
        ("death", "death_date"): [dt.date(2021, 1, 1)],
    }
    tables = ["person", "observation_period", "condition_occurrence", "death"]
    on_the_day = after = 0
    for n in range(30):
        rows = variant_rows(pools, tables, f"0:{n}")
        for death in rows["death"]:
            days = [
                r["condition_start_date"]
                for r in rows["condition_occurrence"]
                if r["person_id"] == death["person_id"]
            ]
            on_the_day += death["death_date"] in days
            after += any(d > death["death_date"] for d in days)
    assert on_the_day > 3 and after > 0


def test_a_birth_date_a_gold_names_is_met() -> None:
    """``birth_datetime < '2020-01-01'``: persons born that day and the days beside it."""
    pools = {("person", "year_of_birth"): [1950]}
    focus = {("person", "birth_datetime"): [dt.date(2020, 1, 1), dt.date(2019, 12, 31)]}
    born = set()
    for n in range(10):
        rows = variant_rows(pools, ["person"], f"1:{n}", focus)
        born |= {r["birth_datetime"] for r in rows["person"]}
        assert all(r["birth_datetime"].year == r["year_of_birth"] for r in rows["person"])
    assert dt.datetime(2020, 1, 1) in born and dt.datetime(2019, 12, 31) in born


def test_a_focus_leads_the_palette() -> None:
    pools = {("person", "year_of_birth"): list(range(1900, 2000))}
    focus = {("person", "year_of_birth"): [1920, 1919, 1921]}
    rows = variant_rows(pools, ["person", "observation_period"], "3:9", focus)
    assert {r["year_of_birth"] for r in rows["person"]} - set(range(1900, 2000)) == set()
    seen = {r["year_of_birth"] for r in rows["person"]}
    assert seen & {1919, 1920, 1921}


def test_some_palettes_take_only_the_concepts_a_gold_names(omop_db) -> None:
    gold = (
        "SELECT COUNT(*) FROM cdm.condition_occurrence a JOIN cdm.condition_occurrence b "
        "ON b.person_id = a.person_id AND b.condition_concept_id = 201826 "
        "WHERE a.condition_concept_id = 4311629"
    )
    con = duckdb.connect(str(omop_db), read_only=True)
    con.execute("SET schema = 'cdm'")
    try:
        base = value_pool.base_pools(con, ["condition_occurrence"])
        domains = value_pool.concept_domains(con, base)
        known = {r[0] for r in con.execute("SELECT concept_id FROM concept").fetchall()}
        local = {"Condition": [2_000_000_001, 2_000_000_002]}
        focus = focus_of(con, gold, TODAY, base, domains, known, local)
    finally:
        con.close()
    key = ("condition_occurrence", "condition_concept_id")
    own = focus[(value_pool.OWN + key[0], key[1])]
    assert sorted(own) == [201826, 4311629] and set(own) < set(focus[key])
    chosen = []
    for n in range(40):
        palette = Palette(random.Random(n), {key: [1, 2, 3]}, focus)
        chosen.append(set(palette.values(*key)))
    assert {201826, 4311629} in chosen  # the two it names, and nothing else
    assert any(c & set(local["Condition"]) for c in chosen)  # or their local children too


def test_distillation_keeps_a_variant_only_for_a_new_kill() -> None:
    d = Distillation({("a", 0), ("a", 1), ("b", 0)}, max_variants=5, patience=2)
    assert not d.offer("c1", [])
    assert d.offer("c2", [("a", 0)])
    assert not d.offer("c3", [("a", 0)])  # killed already
    assert d.killed_by == {("a", 0): "c2"} and d.kept == ["c2"]
    d.tried([("a", 1), ("b", 0)])
    d.tried([("a", 1)])
    assert d.wanted() == [("b", 0)]  # ("a", 1) tried twice: left for a person
    assert not d.done()
    d.offer("c4", [("b", 0)])
    assert d.done() and d.alive == {("a", 1)}


def test_an_interval_of_days_gives_spans() -> None:
    pools, _, _ = value_pool.gold_constants(
        [
            "SELECT COUNT(*) FROM cdm.procedure_occurrence a JOIN cdm.procedure_occurrence b "
            "ON b.person_id = a.person_id AND b.procedure_date < a.procedure_date "
            "+ INTERVAL '30' DAY"
        ],
        today=TODAY,
    )
    assert {29, 30, 31} <= set(pools[value_pool.SPANS])


def test_a_named_span_sets_dates_that_far_apart_and_a_named_count_reaches_eras() -> None:
    """``DATE_DIFF(...) BETWEEN 0 AND 1`` between two visits: some variants put a person's
    dates a named span from one anchor; ``HAVING COUNT(DISTINCT drug_concept_id) >= 5``
    on drug_era: some give a person five eras of five concepts."""
    pools = {
        ("visit_occurrence", "visit_start_date"): [dt.date(2012, 3, 3), dt.date(2016, 1, 1)],
        ("drug_era", "drug_era_start_date"): [dt.date(2017, 1, 1)],
        ("drug_era", "drug_concept_id"): [1, 2, 3, 4, 5, 6],
    }
    tables = ["person", "observation_period", "visit_occurrence", "drug_era"]
    focus = {
        value_pool.SPANS: [0, 1, 2],
        value_pool.COUNTS: [4, 5, 6],
        ("drug_era", "drug_era_start_date"): [dt.date(2017, 1, 1)],
    }
    one_day = five = 0
    for n in range(30):
        rows = variant_rows(pools, tables, f"2:{n}", focus)
        by_person: dict[int, list[dt.date]] = {}
        for v in rows["visit_occurrence"]:
            by_person.setdefault(v["person_id"], []).append(v["visit_start_date"])
        one_day += any(
            abs((a - b).days) == 1 for days in by_person.values() for a in days for b in days
        )
        concepts: dict[int, set[int]] = {}
        for e in rows["drug_era"]:
            concepts.setdefault(e["person_id"], set()).add(e["drug_concept_id"])
        five += any(len(c) >= 5 for c in concepts.values())
    assert one_day >= 3 and five >= 1


def test_a_long_span_reaches_the_observation_periods() -> None:
    """Observation periods of at least fifty years (18,250 days): some variants have one
    exactly that long, and a day shorter or longer."""
    pools, _, _ = value_pool.gold_constants(
        [
            "SELECT COUNT(*) FROM cdm.observation_period op WHERE DATE_DIFF('DAY', "
            "op.observation_period_start_date, op.observation_period_end_date) >= 18250"
        ],
        today=TODAY,
    )
    assert {18249, 18250, 18251} <= set(pools[value_pool.SPANS])
    focus = {value_pool.SPANS: pools[value_pool.SPANS]}
    base = {
        ("observation_period", "observation_period_start_date"): [dt.date(1960, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
    }
    lengths = set()
    for n in range(20):
        rows = variant_rows(base, ["person", "observation_period"], f"4:{n}", focus)
        lengths |= {
            (r["observation_period_end_date"] - r["observation_period_start_date"]).days
            for r in rows["observation_period"]
        }
    assert {18249, 18250, 18251} <= lengths


def test_concept_zero_joins_the_concept_pools_the_base_fills() -> None:
    base = {
        ("person", "gender_concept_id"): [8507, 8532],
        ("person", "year_of_birth"): [1950],
        ("condition_occurrence", "condition_source_concept_id"): [],  # never filled
    }
    pools = value_pool.merged_pools(base, {}, {}, {}, known={0, 8507, 8532})
    assert pools[("person", "gender_concept_id")] == [8507, 8532, 0]
    assert pools[("person", "year_of_birth")] == [1950]
    assert pools[("condition_occurrence", "condition_source_concept_id")] == []
    # a vocabulary without concept 0 gives no concept 0
    pools = value_pool.merged_pools(base, {}, {}, {}, known={8507, 8532})
    assert pools[("person", "gender_concept_id")] == [8507, 8532]


def test_some_persons_are_observed_from_a_named_span_after_birth() -> None:
    """``observation_period_start_date <= birth_datetime + INTERVAL 30 DAY``: some periods
    start exactly 30 days after birth, as `<` and `<=` differ there."""
    pools = {
        ("person", "year_of_birth"): [1990],
        ("observation_period", "observation_period_start_date"): [dt.date(2010, 1, 1)],
        ("observation_period", "observation_period_end_date"): [dt.date(2020, 1, 1)],
    }
    focus = {value_pool.SPANS: [29, 30, 31]}
    at = 0
    for n in range(20):
        rows = variant_rows(pools, ["person", "observation_period"], f"4:{n}", focus)
        born = {p["person_id"]: p["birth_datetime"].date() for p in rows["person"]}
        at += any(
            (r["observation_period_start_date"] - born[r["person_id"]]).days == 30
            for r in rows["observation_period"]
        )
    assert at >= 3
