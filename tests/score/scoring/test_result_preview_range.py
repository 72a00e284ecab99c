"""A result whose dates Python cannot hold still gets its preview (a hostile answer's
date 5877642-06-25 once ended the whole scoring run while the page's rows were kept)."""

from __future__ import annotations

from score.scoring.result_preview import result_preview


def test_a_date_outside_pythons_range_is_previewed_as_text(executor):
    gold = executor.execute("SELECT DATE '2020-01-01' AS d")
    far = executor.execute("SELECT 'infinity'::DATE AS d")
    preview = result_preview(gold, far, match=False, order_matters=False)
    assert preview["predicted"]["rows"] == [["infinity"]]
    assert preview["gold"]["rows"] == [["2020-01-01"]]
