"""A record's result preview does not depend on the order an engine returned an
unordered result in (DuckDB's parallel GROUP BY returns its groups in any order)."""

from __future__ import annotations

import random

from score.execution.result import QueryResult
from score.scoring.result_preview import ROWS, result_preview

ROWS_OF = [(f"g{i % 7}", i, None if i % 5 == 0 else i / 4) for i in range(40)]


def shuffled(seed: int) -> QueryResult:
    rows = list(ROWS_OF)
    random.Random(seed).shuffle(rows)
    return QueryResult.from_rows(["g", "n", "x"], rows)


def test_an_unordered_result_previews_the_same_rows_whatever_order_it_came_in():
    previews = {
        str(result_preview(shuffled(0), shuffled(seed), match=True, order_matters=False))
        for seed in range(5)
    }
    assert len(previews) == 1
    rows = result_preview(shuffled(3), None, match=False, order_matters=False)["gold"]["rows"]
    # sorted on every column: group g0 first, by n
    assert [r[:2] for r in rows] == [["g0", str(n)] for n in (0, 7, 14, 21, 28)][:ROWS]


def test_an_ordered_result_previews_its_first_rows_as_they_came():
    result = shuffled(1)
    side = result_preview(result, None, match=False, order_matters=True)["gold"]
    assert side["rows"][0][1] == str(result.rows()[0][1])


def test_values_arrow_cannot_sort_are_previewed_as_they_came():
    nested = QueryResult.from_rows(["l"], [([2, 1],), ([1],)])
    side = result_preview(nested, None, match=False, order_matters=False)["gold"]
    assert side["total"] == 2 and len(side["rows"]) == 2
