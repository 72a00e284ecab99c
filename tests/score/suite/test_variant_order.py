"""A gold whose ORDER BY leaves differing rows tied on a variant: a right answer that
orders those rows otherwise is not told apart from it; an order that is total still
judges."""

from __future__ import annotations

from score.scoring.variant_order import order_is_open
from score.scoring.variant_pass import Check, OnVariant, settle_order


def _task(gold: str) -> dict:
    return {"id": "t", "gold_sql": gold, "order_matters": True}


def test_an_order_with_ties_is_open_and_a_total_one_is_not(executor):
    tied = "SELECT gender_concept_id, person_id FROM cdm.person ORDER BY gender_concept_id"
    total = "SELECT gender_concept_id, person_id FROM cdm.person ORDER BY person_id"
    assert order_is_open(tied, 2, executor, None)
    assert not order_is_open(total, 2, executor, None)
    assert not order_is_open("SELECT person_id FROM cdm.person", 1, executor, None)


def test_rows_tied_on_the_gold_keys_may_come_in_either_order(executor):
    gold = "SELECT gender_concept_id, person_id FROM cdm.person ORDER BY gender_concept_id"
    one = executor.execute(gold + ", person_id LIMIT 5000")
    other = executor.execute(gold + ", person_id DESC LIMIT 5000")
    differs = OnVariant("differs", "row 1 differs")
    settled = settle_order(Check(_task(gold), gold), differs, one, other, executor, "sqlgold", {})
    assert settled.kind == "same"
    # a total order still tells the two apart
    total = "SELECT gender_concept_id, person_id FROM cdm.person ORDER BY person_id"
    kept = settle_order(Check(_task(total), total), differs, one, other, executor, "sqlgold", {})
    assert kept is differs


def test_other_rows_are_never_settled(executor):
    gold = "SELECT gender_concept_id, person_id FROM cdm.person ORDER BY gender_concept_id"
    one = executor.execute(gold + " LIMIT 10")
    other = executor.execute(gold + " LIMIT 9")
    differs = OnVariant("differs", "9 rows, not 10")
    assert (
        settle_order(Check(_task(gold), gold), differs, one, other, executor, "sqlgold", {})
        is differs
    )
