"""The leakage-aware split: deterministic, tier-stratified, rounded half up, stable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from score.errors import SqlgoldError
from score.inputs.split import count_for_test, held_out_ids, rank_key, split_tasks

TIERS = ("simple", "compositional", "schema_aware", "unanswerable")


def make_tasks(n_per_tier: dict[str, int]) -> list[dict]:
    return [
        {"id": f"{tier[:3]}-{i:03d}", "tier": tier}
        for tier, n in n_per_tier.items()
        for i in range(n)
    ]


def ids(tasks: list[dict]) -> list[str]:
    return [t["id"] for t in tasks]


def test_rank_key_is_sha256_of_seed_colon_id():
    import hashlib

    assert rank_key("q1", 7) == hashlib.sha256(b"7:q1").hexdigest()


@pytest.mark.parametrize(
    ("n", "fraction", "expected"),
    [
        (5, 0.5, 3),  # half up, not Python's banker's 2
        (3, 0.5, 2),
        (4, 0.5, 2),
        (1, 0.5, 1),
        (0, 0.5, 0),
        (10, 0.15, 2),  # exact decimal: 1.5 rounds up despite binary floats
        (10, 0.25, 3),
        (7, 1.0, 7),
        (7, 0.0, 0),
        (3, 1 / 3, 1),
    ],
)
def test_count_for_test_rounds_half_up(n, fraction, expected):
    assert count_for_test(n, fraction) == expected


def test_every_tier_is_split_on_its_own():
    tasks = make_tasks({"simple": 5, "compositional": 3, "schema_aware": 8, "unanswerable": 1})
    s = split_tasks(tasks, test_fraction=0.5, seed=0)
    for tier, n in (("simple", 5), ("compositional", 3), ("schema_aware", 8), ("unanswerable", 1)):
        assert sum(t["tier"] == tier for t in s["test"]) == count_for_test(n, 0.5)
    assert sorted(ids(s["train"]) + ids(s["test"])) == sorted(ids(tasks))
    assert not set(ids(s["train"])) & set(ids(s["test"]))


def test_within_a_tier_the_lowest_ranks_go_to_test():
    tasks = make_tasks({"simple": 6})
    expected = sorted(ids(tasks), key=lambda i: rank_key(i, 3))[:3]
    assert sorted(ids(split_tasks(tasks, 0.5, seed=3)["test"])) == sorted(expected)


def test_sides_keep_input_order_and_the_split_ignores_it():
    tasks = make_tasks({"simple": 7, "schema_aware": 5})
    s = split_tasks(tasks)
    assert ids(s["test"]) == [i for i in ids(tasks) if i in set(ids(s["test"]))]
    reversed_split = split_tasks(list(reversed(tasks)))
    assert set(ids(reversed_split["test"])) == set(ids(s["test"]))


def test_pinned_split_is_the_same_on_every_machine():
    tasks = make_tasks({"simple": 4, "compositional": 3})
    assert sorted(held_out_ids(tasks, 0.5, 0)) == ["com-000", "com-002", "sim-001", "sim-002"]


def test_same_split_under_any_hash_seed():
    code = (
        "import json, sys; from score.inputs.split import held_out_ids; "
        "tasks = [{'id': f't{i}', 'tier': ('a', 'b')[i % 2]} for i in range(40)]; "
        "print(json.dumps(sorted(held_out_ids(tasks, 0.3, 5))))"
    )
    outputs = set()
    for hash_seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(out.stdout)
    assert len(outputs) == 1
    assert len(json.loads(outputs.pop())) == 2 * count_for_test(20, 0.3)


def test_fraction_one_puts_everything_in_test():
    tasks = make_tasks({"simple": 3, "unanswerable": 2})
    s = split_tasks(tasks, test_fraction=1.0)
    assert s["train"] == [] and ids(s["test"]) == ids(tasks)


def test_fraction_zero_puts_everything_in_train():
    tasks = make_tasks({"simple": 3})
    s = split_tasks(tasks, test_fraction=0.0)
    assert s["test"] == [] and ids(s["train"]) == ids(tasks)


def test_the_seed_changes_the_split():
    tasks = make_tasks({"simple": 30})
    splits = {frozenset(held_out_ids(tasks, 0.5, seed)) for seed in range(5)}
    assert len(splits) > 1


def test_adding_a_task_moves_at_most_one_existing_task():
    for n in range(1, 25):
        before = make_tasks({"simple": n})
        after = before + [{"id": "zzz-new", "tier": "simple"}]
        old, new = held_out_ids(before, 0.5, 0), held_out_ids(after, 0.5, 0)
        moved = {i for i in ids(before) if (i in old) != (i in new)}
        assert len(moved) <= 1, n


def test_empty_input_gives_empty_sides():
    assert split_tasks([]) == {"train": [], "test": []}


@pytest.mark.parametrize("fraction", [-0.1, 1.01, float("nan"), "0.5", True])
def test_a_bad_fraction_is_refused(fraction):
    with pytest.raises(SqlgoldError, match=r"^\[split\]"):
        split_tasks(make_tasks({"simple": 2}), test_fraction=fraction)


def test_a_bad_seed_is_refused():
    with pytest.raises(SqlgoldError, match="seed"):
        split_tasks(make_tasks({"simple": 2}), seed="0")


def test_duplicate_ids_and_missing_tiers_are_refused():
    with pytest.raises(SqlgoldError, match="duplicate") as e:
        split_tasks([{"id": "a", "tier": "simple"}, {"id": "a", "tier": "simple"}])
    assert e.value.task_id == "a"
    with pytest.raises(SqlgoldError, match="no tier"):
        split_tasks([{"id": "a"}])
