"""Where two results differ, for a human running ``verify``: which predicted column
holds which gold column's values, and which rows are missing or extra.

Columns are linked by content, as the ``sqlgold`` profile links them (names ignored):
a link is ``same`` (same values, same name), ``renamed`` (same values, another name) or
``partial`` (no predicted column has exactly these values; the unused predicted column
of the same kind sharing the most values stands in).  Rows are then compared over the
linked columns as multisets (numbers within the tolerance): the gold rows with no
partner are *missing*, the predicted rows with none are *extra*.  When order matters
and the rows agree as a multiset, the first row out of order is named.

>>> from score.execution.result import QueryResult
>>> gold = QueryResult.from_rows(["n", "name"], [(1, "a"), (2, "b"), (3, "c")])
>>> pred = QueryResult.from_rows(["label", "n"], [("a", 1), ("B", 2), ("c", 3)])
>>> d = diff_results(gold, pred)
>>> [(link.gold_name, link.pred_name, link.how) for link in d.links]
[('n', 'n', 'same'), ('name', 'label', 'partial')]
>>> d.missing, d.extra
([(2, 'b')], [('B', 2)])
>>> print(d.render())  # doctest: +ELLIPSIS
results differ: ...
columns (gold -> predicted):
  1 'n' -> 2 'n' (same values)
  2 'name' -> 1 'label' (partial: 2 of 3 values in common)
rows: gold 3, predicted 3
1 gold row(s) missing from the prediction:
  (2, 'b')
1 predicted row(s) not in gold:
  ('B', 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from score.comparison.compare import compare
from score.comparison.hashing import hashing_for
from score.comparison.profiles.base import Verdict
from score.comparison.profiles.column_checks import (
    Engine,
    cells_equal,
    columns,
    combine,
    counts_in,
    pair_hashes,
)
from score.comparison.profiles.column_mapping import Matcher
from score.comparison.profiles.sqlgold import DEFAULT_TOLERANCE, RULES
from score.comparison.values import NormColumn, Tolerance, show
from score.execution.result import QueryResult

_PAIRING_LIMIT = 2000  # largest residual re-paired within the tolerance


@dataclass(frozen=True)
class ColumnLink:
    """One gold column and the predicted column holding its values (if any)."""

    gold: int
    gold_name: str
    pred: int | None
    pred_name: str | None
    how: str  # "same" | "renamed" | "partial" | "none"
    common: int = 0  # partial links: values the two columns share


@dataclass(frozen=True)
class ResultDiff:
    """The difference between a gold and a predicted result (see module doc)."""

    match: bool
    reason: str
    links: list[ColumnLink]
    unused: list[tuple[int, str]]
    gold_rows: int
    pred_rows: int
    missing: list[tuple] = field(default_factory=list)
    missing_count: int = 0
    extra: list[tuple] = field(default_factory=list)
    extra_count: int = 0
    out_of_order: tuple[int, tuple, tuple] | None = None  # row, predicted, gold

    def render(self) -> str:
        """The diff as plain text, one fact per line."""
        lines = [("results match: " if self.match else "results differ: ") + self.reason]
        lines.append("columns (gold -> predicted):")
        for link in self.links:
            gold = f"  {link.gold + 1} {link.gold_name!r} -> "
            if link.pred is None:
                lines.append(gold + "none (no predicted column holds these values)")
                continue
            what = {
                "same": "same values",
                "renamed": "same values, another name",
                "partial": f"partial: {link.common} of {self.gold_rows} values in common",
            }[link.how]
            lines.append(gold + f"{link.pred + 1} {link.pred_name!r} ({what})")
        if self.unused:
            lines.append(
                "predicted columns not used: " + ", ".join(f"{i + 1} {n!r}" for i, n in self.unused)
            )
        lines.append(f"rows: gold {self.gold_rows}, predicted {self.pred_rows}")
        if self.missing_count:
            lines.append(
                f"{self.missing_count} gold row(s) missing from the prediction"
                + _first(len(self.missing), self.missing_count)
                + ":"
            )
            lines += ["  " + _row(r) for r in self.missing]
        if self.extra_count:
            lines.append(
                f"{self.extra_count} predicted row(s) not in gold"
                + _first(len(self.extra), self.extra_count)
                + ":"
            )
            lines += ["  " + _row(r) for r in self.extra]
        if self.out_of_order is not None:
            i, p, g = self.out_of_order
            lines.append(
                f"same rows in another order; first difference at row {i + 1}: "
                f"predicted {_row(p)} vs gold {_row(g)}"
            )
        return "\n".join(lines)


def _first(shown: int, total: int) -> str:
    return f" (first {shown})" if shown < total else ""


def _row(r: tuple) -> str:
    return "(" + ", ".join(show(v) for v in r) + ")"


def diff_results(
    gold: QueryResult,
    predicted: QueryResult,
    *,
    order_matters: bool = False,
    tolerance: Tolerance | None = None,
    limit: int = 10,
    verdict: Verdict | None = None,
) -> ResultDiff:
    """Link columns by content and list the rows that differ (first ``limit`` of each).

    ``verdict`` is the ``sqlgold`` profile's verdict on the pair under the same
    tolerance and order, when the caller already has it (the scorer does): it is not
    computed again."""
    tol = tolerance or DEFAULT_TOLERANCE
    if verdict is None:
        verdict = compare(gold, predicted, "sqlgold", order_matters=order_matters, tolerance=tol)
    # the string-hash path the comparison took (in-process for small results): the
    # columns it normalised are reused, and a small diff never starts DuckDB to hash
    with hashing_for(max(gold.num_rows, predicted.num_rows)):
        return _diff(gold, predicted, verdict, order_matters, tol, limit)


def _diff(
    gold: QueryResult,
    predicted: QueryResult,
    verdict: Verdict,
    order_matters: bool,
    tol: Tolerance,
    limit: int,
) -> ResultDiff:
    G, P = columns(gold, RULES, 0), columns(predicted, RULES, 1)
    links = _links(G, P, tol, order_matters)
    used = {link.pred for link in links if link.pred is not None}
    unused = [(j, p.name) for j, p in enumerate(P) if j not in used]
    pairs = [(G[link.gold], P[link.pred]) for link in links if link.pred is not None]
    out = ResultDiff(
        verdict.match, verdict.reason, links, unused, gold.num_rows, predicted.num_rows
    )
    if verdict.match:
        return out
    miss, extra = _unpaired_rows(pairs, gold.num_rows, predicted.num_rows, tol)
    order = None
    if order_matters and not len(miss) and not len(extra) and gold.num_rows == predicted.num_rows:
        first = _first_out_of_order(pairs, gold.num_rows, tol)
        if first is not None:
            order = (first, _tuple(P, first), _tuple(G, first))
    return ResultDiff(
        verdict.match,
        verdict.reason,
        links,
        unused,
        gold.num_rows,
        predicted.num_rows,
        [_tuple(G, int(i)) for i in miss[:limit]],
        len(miss),
        [_tuple(P, int(i)) for i in extra[:limit]],
        len(extra),
        order,
    )


def _tuple(cols: list[NormColumn], i: int) -> tuple:
    return tuple(c.display(i) for c in cols)


def _links(G, P, tol: Tolerance, ordered: bool) -> list[ColumnLink]:
    """Gold column -> predicted column: a full content match if the engine finds one,
    else a maximum one-to-one matching of exact candidates, then partial stand-ins."""
    positions = list(range(len(G)))
    matcher = Matcher(G, P, positions, Engine(RULES, tol), ordered)
    assign: dict[int, int] = {}
    if len(G) == len(P) and (not G or G[0].n == P[0].n):
        matcher.run()
        assign = dict(matcher.mapping or {})
    if not assign:
        cands = [[j for j, p in enumerate(P) if matcher.candidate(g, p)] for g in G]
        assign = _matching(cands, len(P))
    links = []
    for i, g in enumerate(G):
        j = assign.get(i)
        if j is not None:
            how = "same" if P[j].name == g.name else "renamed"
            links.append(ColumnLink(i, g.name, j, P[j].name, how))
            continue
        free = [k for k in range(len(P)) if k not in assign.values() and P[k].cls == g.cls]
        best = max(free, key=lambda k: (_common(g, P[k], tol), -abs(k - i)), default=None)
        common = _common(g, P[best], tol) if best is not None else 0
        if best is None or common == 0:
            links.append(ColumnLink(i, g.name, None, None, "none"))
        else:
            assign[i] = best
            links.append(ColumnLink(i, g.name, best, P[best].name, "partial", common))
    return links


def _matching(cands: list[list[int]], n_pred: int) -> dict[int, int]:
    """A maximum one-to-one matching, preferring each gold column's own position: the
    assignment of largest weight, each link 1000 and 1 more in place
    (:func:`max_weight_assignment`, exact, in plain Python: scipy's solver costs a fifth of
    a second to import).

    >>> _matching([[1], [0], []], 2)
    {0: 1, 1: 0}
    >>> _matching([[0, 1], [0, 1]], 2)
    {0: 0, 1: 1}
    >>> _matching([[1, 2], [1, 2]], 3)  # gold column 1 in place: 1001 + 1000
    {0: 2, 1: 1}
    """
    if not cands or not n_pred:
        return {}
    weight = [[0.0] * n_pred for _ in cands]
    for i, c in enumerate(cands):
        for j in c:
            weight[i][j] = 1000.0 + (i == j)  # as many links as possible, then in place
    found = max_weight_assignment(weight)
    return {i: j for i, j in sorted(found.items()) if weight[i][j] > 0}


def max_weight_assignment(weight: list[list[float]]) -> dict[int, int]:
    """Row -> column of an assignment of largest total weight (every row of a matrix with
    no more rows than columns gets a column, and the other way round): the Hungarian
    algorithm with potentials, O(n^2 m).

    >>> max_weight_assignment([[1.0, 5.0], [4.0, 2.0]])
    {0: 1, 1: 0}
    >>> max_weight_assignment([[3.0], [7.0]])
    {1: 0}
    """
    rows = len(weight)
    cols = len(weight[0]) if rows else 0
    if rows > cols:  # as columns: every column gets a row
        turned = max_weight_assignment([list(c) for c in zip(*weight, strict=True)])
        return dict(sorted((i, j) for j, i in turned.items()))
    inf = float("inf")
    # minimise the cost -weight over 1-based rows and columns; column 0 is the root
    u = [0.0] * (rows + 1)
    v = [0.0] * (cols + 1)
    owner = [0] * (cols + 1)  # owner[j]: the row assigned column j (0: none)
    way = [0] * (cols + 1)
    for i in range(1, rows + 1):
        owner[0] = i
        j0 = 0
        low = [inf] * (cols + 1)
        used = [False] * (cols + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = owner[j0], inf, 0
            for j in range(1, cols + 1):
                if not used[j]:
                    cur = -weight[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < low[j]:
                        low[j], way[j] = cur, j0
                    if low[j] < delta:
                        delta, j1 = low[j], j
            for j in range(cols + 1):
                if used[j]:
                    u[owner[j]] += delta
                    v[j] -= delta
                else:
                    low[j] -= delta
            j0 = j1
            if owner[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            owner[j0] = owner[j1]
            j0 = j1
    return dict(sorted((owner[j] - 1, j - 1) for j in range(1, cols + 1) if owner[j]))


def _common(g: NormColumn, p: NormColumn, tol: Tolerance) -> int:
    """How many values the two columns share (as multisets, exact hashes)."""
    hg, hp, _ = pair_hashes(g, p, None)
    ug, cg = np.unique(hg, return_counts=True)
    up, cp = np.unique(hp, return_counts=True)
    _, ig, ip = np.intersect1d(ug, up, assume_unique=True, return_indices=True)
    return int(np.minimum(cg[ig], cp[ip]).sum())


def _unpaired_rows(pairs, n_gold: int, n_pred: int, tol: Tolerance):
    """Gold rows without a predicted partner and predicted rows without a gold one."""
    hs = [pair_hashes(g, p, None) for g, p in pairs]
    rg = combine([h[0] for h in hs], n_gold)
    rp = combine([h[1] for h in hs], n_pred)
    miss = _surplus(rg, rp)
    extra = _surplus(rp, rg)
    tolerant = any(pair_hashes(g, p, tol)[2] for g, p in pairs)
    if tolerant and len(miss) and len(extra) and max(len(miss), len(extra)) <= _PAIRING_LIMIT:
        adj = np.ones((len(miss), len(extra)), dtype=bool)
        for g, p in pairs:
            for a, i in enumerate(miss):  # one gold row against every extra row
                adj[a] &= cells_equal(g, p, np.full(len(extra), i), extra, tol, True)
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import maximum_bipartite_matching

        match = maximum_bipartite_matching(csr_matrix(adj), perm_type="column")
        paired_gold = match >= 0
        paired_pred = np.zeros(len(extra), dtype=bool)
        paired_pred[match[paired_gold]] = True
        miss, extra = miss[~paired_gold], extra[~paired_pred]
    return miss, extra


def _surplus(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Positions of ``a`` left over after pairing equal hashes with ``b`` (in order)."""
    order = np.argsort(a, kind="stable")
    sa = a[order]
    rank = np.arange(len(sa)) - np.searchsorted(sa, sa, "left")  # place among equals
    ub, cb = np.unique(b, return_counts=True)
    return np.sort(order[rank >= counts_in(sa, ub, cb)])


def _first_out_of_order(pairs, n: int, tol: Tolerance) -> int | None:
    ok = np.ones(n, dtype=bool)
    for g, p in pairs:
        ok &= cells_equal(g, p, None, None, tol, True)
    bad = np.flatnonzero(~ok)
    return int(bad[0]) if len(bad) else None
