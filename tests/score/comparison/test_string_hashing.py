"""String hashing paths: in-process for small results, DuckDB for large, never mixed."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from score.comparison.compare import compare
from score.comparison.hashing import SMALL_ROWS, _hash_strings_local, hash_strings, hashing_for
from score.execution.result import QueryResult


def test_local_hash_separates_distinct_values_and_seeds():
    values = pa.array([f"concept {i}" for i in range(100_000)] + ["", "a", "ab", "ba"])
    h = _hash_strings_local(values, 0)
    assert len(np.unique(h)) == len(values)
    assert not np.array_equal(h, _hash_strings_local(values, 1))


def test_local_hash_reads_sliced_large_and_binary_arrays():
    base = pa.array(["x", "yy", "zzz", "yy"])
    whole = _hash_strings_local(base, 0)
    assert np.array_equal(_hash_strings_local(base.slice(1, 3), 0), whole[1:])
    assert np.array_equal(_hash_strings_local(base.cast(pa.large_string()), 0), whole)
    assert np.array_equal(_hash_strings_local(base.cast(pa.binary()), 0), whole)


def test_the_path_follows_the_largest_result_in_a_comparison():
    with hashing_for(SMALL_ROWS):
        small = hash_strings(pa.array(["a"]))
    with hashing_for(SMALL_ROWS + 1):
        large = hash_strings(pa.array(["a"]))
    assert small[0] != large[0]  # two different functions: never compared with each other


def test_equal_results_match_on_both_sides_of_the_threshold():
    for n in (SMALL_ROWS - 1, SMALL_ROWS, SMALL_ROWS + 1):
        rows = [(i, f"name {i % 97}") for i in range(n)]
        gold = QueryResult.from_rows(["id", "name"], rows)
        pred = QueryResult.from_rows(["name", "id"], [(b, a) for a, b in reversed(rows)])
        assert compare(gold, pred).match, n
        changed = list(rows)
        changed[0] = (0, "name X")
        assert not compare(gold, QueryResult.from_rows(["id", "name"], changed)).match
