"""The column mapping of the content-mapped profiles: which predicted column holds
which gold column's values, and whether the rows then agree.

No permutation search: each column gets a content signature (the wrapping sum of its
per-row value hashes, so a multiset fingerprint in O(n)); a gold column's candidates are
the predicted columns of its class with an equal signature (or, for numbers under a
tolerance, with sorted values equal within it).  When every candidate list is a single
column the mapping is forced; otherwise a search bounded by ``Engine.budget`` row checks
runs among the columns that share a signature, pruned by joint checks of the columns
assigned so far, and never trying two identical predicted columns for one gold column.

Rows: a 64-bit hash per row combines the mapped columns' value hashes; both sides are
sorted by it and compared aligned, and every aligned cell is then checked for real
(hashes of strings are confirmed on the strings).  Under a tolerance, rows are sorted by
their exact columns and then by coarsely quantised numbers; rows that still disagree
are re-paired by a bipartite matching within their group of equal exact columns.
"""

from __future__ import annotations

import hashlib

import numpy as np

from score.comparison.hashing import splitmix64
from score.comparison.profiles.base import Verdict
from score.comparison.profiles.column_checks import (
    Engine,
    cells_equal,
    combine,
    counts_in,
    fingerprint,
    pair_hashes,
    valid_rows,
)
from score.comparison.values import NormColumn, show

_U = np.uint64
_GROUP_LIMIT = 512  # largest group of rows re-paired by bipartite matching


class _BudgetSpent(Exception):
    pass


class Matcher:
    """One comparison: candidates, the mapping search and the row checks (also used by
    :mod:`score.comparison.result_diff` to explain a mismatch)."""

    def __init__(self, G, P, positions, engine: Engine, ordered: bool) -> None:
        self.G, self.P, self.pos = G, P, positions
        self.tol, self.ordered = engine.tolerance, ordered
        self.nan_equal = engine.rules.nan_equals_nan
        self.budget = engine.budget
        self.n = G[0].n if G else (P[0].n if P else 0)
        self.checks = 0
        self.partials = 0
        self.first_failure: str | None = None
        self._sums: dict[tuple[int, bool], int] = {}
        self.mapping: dict[int, int] | None = None  # gold column -> predicted, on a match

    # -- candidates ---------------------------------------------------------------
    def _sum(self, c: NormColumn, floats: bool) -> int:
        key = (id(c), floats)
        if key not in self._sums:
            self._sums[key] = int(np.sum(c.fhash if floats else c.hash, dtype=_U))
        return self._sums[key]

    def candidate(self, g: NormColumn, p: NormColumn, within_tolerance: bool = True) -> bool:
        """Could ``p`` be ``g``'s column: same class, NULL count and content signature
        (or, for numbers under a tolerance, sorted values equal within it)?"""
        if g.cls != p.cls or g.null_count != p.null_count:
            return False
        if g.cls == "null":
            return True
        tolerant = pair_hashes(g, p, self.tol)[2]
        floats = g.is_numeric and p.is_numeric and not (g.kind == p.kind == "int")
        if self._sum(g, floats) == self._sum(p, floats):
            return True
        if not tolerant or not within_tolerance:
            return False
        a, b = g.sorted_values, p.sorted_values
        assert self.tol is not None  # tolerant pairs exist only under a tolerance
        ok = self.tol.close(a, b)
        if self.nan_equal:
            ok |= np.isnan(a) & np.isnan(b)
        return bool(ok.all())

    # -- the search ---------------------------------------------------------------
    def run(self) -> Verdict:
        """Exact content matches first; the tolerant (sorting) check only for gold
        columns without one, and for every column if that finds no mapping."""
        G, P = self.G, self.P
        cands = [[j for j, p in enumerate(P) if self.candidate(g, p, False)] for g in G]
        narrowed = [i for i, c in enumerate(cands) if c]
        for i, c in enumerate(cands):
            if not c:
                c.extend(j for j, p in enumerate(P) if self.candidate(G[i], p))
        verdict = self._run(cands)
        if verdict.match or self.tol is None or not narrowed or self.mapping is not None:
            return verdict
        wide = [[j for j, p in enumerate(P) if self.candidate(g, p)] for g in G]
        if wide == cands:
            return verdict
        again = self._run(wide)
        return again if again.match else verdict

    def _run(self, cands: list[list[int]]) -> Verdict:
        G, P = self.G, self.P
        lonely = [i for i, c in enumerate(cands) if not c]
        if lonely:
            i = lonely[0]
            more = f" (and {len(lonely) - 1} more)" if len(lonely) > 1 else ""
            why = f"column {self._gname(i)} of gold matches no predicted column{more}"
            return Verdict(False, why + self._closest(cands, lonely))
        unmatched = _unmatched(cands, len(P))
        if unmatched is not None:
            names = ", ".join(self.P[j].name for j in cands[unmatched])
            return Verdict(
                False,
                f"no one-to-one column mapping: gold column {self._gname(unmatched)} can only "
                f"map to predicted column(s) {names}, which other gold columns need",
            )
        cands = self._refine(cands)
        if any(not c for c in cands):
            return Verdict(
                False,
                "no column mapping makes the rows equal: the columns relate "
                "to each other differently",
            )
        order = sorted(range(len(G)), key=lambda i: (len(cands[i]), i))
        self._ident: dict[int, bytes] = {}
        try:
            found = self._search(order, 0, {}, set(), cands)
        except _BudgetSpent:
            return Verdict(
                False,
                f"no column mapping found within the search budget ({self.budget} row "
                f"checks) among columns with identical content signatures",
            )
        if found is not None:
            self.mapping = found
            return Verdict(True, self._success(found))
        return Verdict(False, self.first_failure or "rows differ")

    def _closest(self, cands: list[list[int]], lonely: list[int]) -> str:
        """Where the rows differ if each lonely gold column took the unused predicted
        column most like it (same class first, then the same position)."""
        assign: dict[int, int] = {}
        for i, c in enumerate(cands):
            free = [j for j in c if j not in assign.values()]
            if free:
                assign[i] = free[0]
        for i in lonely:
            free = [j for j in range(len(self.P)) if j not in assign.values()]
            if not free:
                return ""
            free.sort(key=lambda j: (self.P[j].cls != self.G[i].cls, j != self.pos[i], j))
            assign[i] = free[0]
        if len(assign) != len(self.G):
            return ""
        ok, why = self.rows(assign)
        if ok or not why:
            return ""
        j = assign[lonely[0]]
        return f"; with predicted column {j + 1} {self.P[j].name!r} in its place, {why}"

    def _ident_key(self, j: int) -> bytes:
        if j not in self._ident:
            p = self.P[j]
            self._ident[j] = p.cls.encode() + hashlib.blake2b(p.hash.tobytes()).digest()
        return self._ident[j]

    def _search(self, order, k, assign: dict[int, int], used: set[int], cands):
        if k == len(order):
            self._spend()
            ok, why = self.rows(assign)
            if ok:
                return dict(assign)
            if self.first_failure is None:
                self.first_failure = why
            return None
        i = order[k]
        tried: set[bytes] = set()
        for j in cands[i]:
            if j in used:
                continue
            if len(cands[i]) > 1:
                key = self._ident_key(j)
                if key in tried:
                    continue
                tried.add(key)
            assign[i] = j
            used.add(j)
            if len(cands[i]) == 1 or k == len(order) - 1 or self._partial(assign):
                found = self._search(order, k + 1, assign, used, cands)
                if found is not None:
                    return found
            del assign[i]
            used.discard(j)
        return None

    def _spend(self) -> None:
        self.checks += 1
        if self.checks > self.budget:
            raise _BudgetSpent

    def _partial(self, assign: dict[int, int]) -> bool:
        """The columns mapped so far agree jointly (exact pairs only): a pruning test on
        multiset fingerprints, O(n) and never wrong when it says they differ."""
        hs = [pair_hashes(self.G[i], self.P[j], self.tol) for i, j in sorted(assign.items())]
        exact = [(hg, hp) for hg, hp, tolerant in hs if not tolerant]
        if len(exact) < 2:
            return True
        self.partials += 1
        if self.partials > 50 * self.budget:
            raise _BudgetSpent
        rg = combine([h for h, _ in exact], self.n)
        rp = combine([h for _, h in exact], self.n)
        if self.ordered:
            return bool(np.array_equal(rg, rp))
        return fingerprint(rg) == fingerprint(rp)

    def _refine(self, cands: list[list[int]]) -> list[list[int]]:
        """Narrow ambiguous candidates by how each column relates to all the others:
        under a valid mapping, the multiset of joint fingerprints of (i, j) over every
        other gold column j equals that of (x, y) over every other predicted column y.
        Only when both sides have the same columns, and only columns compared exactly
        (numbers under a tolerance are left out unless all of them are integers)."""
        if len(self.G) != len(self.P) or all(len(c) <= 1 for c in cands):
            return cands
        ints_only = all(c.kind == "int" for c in self.G + self.P if c.cls == "num")

        def usable(c: NormColumn) -> bool:  # compared exactly under any mapping
            return self.tol is None or c.cls != "num" or ints_only

        def key(c: NormColumn) -> np.ndarray:
            return splitmix64(c.fhash if c.is_numeric else c.hash)

        def profile(cols: list[NormColumn], i: int) -> list[int]:
            mine = key(cols[i])
            return sorted(
                fingerprint(splitmix64(mine ^ (c.fhash if c.is_numeric else c.hash)))
                for j, c in enumerate(cols)
                if j != i and usable(c)
            )

        if not any(usable(c) for c in self.G):
            return cands
        pred_profiles: dict[int, list[int]] = {}
        out = []
        for i, c in enumerate(cands):
            if len(c) <= 1 or not usable(self.G[i]):
                out.append(c)
                continue
            mine = profile(self.G, i)
            keep = []
            for x in c:
                if x not in pred_profiles:
                    pred_profiles[x] = profile(self.P, x)
                if pred_profiles[x] == mine:
                    keep.append(x)
            out.append(keep)
        return out

    # -- rows ---------------------------------------------------------------------
    def rows(self, assign: dict[int, int]) -> tuple[bool, str]:
        pairs = [(self.G[i], self.P[assign[i]]) for i in range(len(self.G))]
        if self.ordered:
            return self._rows_ordered(pairs)
        return self._rows_unordered(pairs)

    def _rows_ordered(self, pairs) -> tuple[bool, str]:
        first_row, first_col = self.n, -1
        for c, (g, p) in enumerate(pairs):
            ok = cells_equal(g, p, None, None, self.tol, self.nan_equal)
            bad = np.flatnonzero(~ok)
            if len(bad) and bad[0] < first_row:
                first_row, first_col = int(bad[0]), c
        if first_col < 0:
            return True, ""
        g, p = pairs[first_col]
        return False, (
            f"row {first_row + 1} differs in column {self._gname(first_col)}: "
            f"predicted {show(p.display(first_row))} vs gold {show(g.display(first_row))}"
        )

    def _rows_unordered(self, pairs) -> tuple[bool, str]:
        n = self.n
        hs = [pair_hashes(g, p, self.tol) for g, p in pairs]
        rg = combine([h[0] for h in hs], n)
        rp = combine([h[1] for h in hs], n)
        og = np.argsort(rg, kind="stable")
        op = np.argsort(rp, kind="stable")
        if np.array_equal(rg[og], rp[op]):
            oks = [cells_equal(g, p, og, op, None, self.nan_equal) for g, p in pairs]
            if all(ok.all() for ok in oks):
                return True, ""
        tolerant = [i for i, h in enumerate(hs) if h[2]]
        if tolerant and self._tolerant_rows(pairs, hs, tolerant):
            return True, ""
        return False, self._multiset_reason(pairs, rg, rp)

    def _tolerant_rows(self, pairs, hs, tolerant) -> bool:
        """Rows equal as multisets with numbers compared within the tolerance."""
        n, tol = self.n, self.tol
        exact = [i for i in range(len(pairs)) if i not in tolerant]
        kg = combine([hs[i][0] for i in exact], n)
        kp = combine([hs[i][1] for i in exact], n)
        if exact and not np.array_equal(np.sort(kg), np.sort(kp)):
            return False  # the exact columns already differ: no tolerance helps
        sg = np.lexsort(self._sort_keys([pairs[i][0] for i in tolerant], kg))
        sp = np.lexsort(self._sort_keys([pairs[i][1] for i in tolerant], kp))
        if not np.array_equal(kg[sg], kp[sp]):
            return False  # the exact columns already differ
        ok = np.ones(n, dtype=bool)
        for g, p in pairs:
            ok &= cells_equal(g, p, sg, sp, tol, self.nan_equal)
        bad = np.flatnonzero(~ok)
        if not len(bad):
            return True
        keys = kg[sg]
        for key in np.unique(keys[bad]):
            lo, hi = np.searchsorted(keys, key, "left"), np.searchsorted(keys, key, "right")
            span = np.arange(lo, hi)
            if hi - lo > _GROUP_LIMIT:
                span = bad[(bad >= lo) & (bad < hi)]
                if len(span) > _GROUP_LIMIT:
                    return False
            if not self._pairable([pairs[i] for i in tolerant], sg[span], sp[span]):
                return False
        return True

    def _sort_keys(self, cols: list[NormColumn], k: np.ndarray) -> list[np.ndarray]:
        """lexsort keys (least significant first): raw numbers, quantised numbers, the
        NaN/NULL pattern, then the exact columns' hash."""
        raws, quants = [], []
        state = np.zeros(self.n, dtype=np.int64)
        assert self.tol is not None  # rows are sorted this way only under a tolerance
        for j, c in enumerate(cols):
            v = c.values
            assert v is not None  # a numeric column
            nan = np.isnan(v)
            null = ~valid_rows(c, None)
            state += (nan.astype(np.int64) + null) * 3**j
            m, e = np.frexp(np.where(nan, 0.0, v))
            with np.errstate(over="ignore", invalid="ignore"):
                q = np.ldexp(np.round(m * 1024.0), e)
            q[np.abs(v) <= self.tol.abs] = 0.0
            raws.append(np.where(nan, 0.0, v))
            quants.append(q)
        return raws[::-1] + quants[::-1] + [state, k]

    def _pairable(self, cols, ig: np.ndarray, ip: np.ndarray) -> bool:
        """A perfect matching of gold rows ``ig`` to predicted rows ``ip`` exists with
        every tolerant cell close."""
        m = len(ig)
        adj = np.ones((m, m), dtype=bool)
        assert self.tol is not None  # rows are re-paired only under a tolerance
        for g, p in cols:
            vg, vp = g.values[ig][:, None], p.values[ip][None, :]
            mg, mp = valid_rows(g, ig)[:, None], valid_rows(p, ip)[None, :]
            ok = self.tol.close(vg, vp)
            if self.nan_equal:
                ok |= np.isnan(vg) & np.isnan(vp)
            adj &= (mg == mp) & (~mg | ok)
        from scipy.sparse import csr_matrix  # scipy only when tolerant cells need pairing
        from scipy.sparse.csgraph import maximum_bipartite_matching

        match = maximum_bipartite_matching(csr_matrix(adj), perm_type="column")
        return bool((match >= 0).all())

    # -- reasons ------------------------------------------------------------------
    def _gname(self, i: int) -> str:
        return f"{self.pos[i] + 1} {self.G[i].name!r}"

    def _row(self, cols: list[NormColumn], r: int) -> str:
        return "(" + ", ".join(show(c.display(r)) for c in cols) + ")"

    def _multiset_reason(self, pairs, rg: np.ndarray, rp: np.ndarray) -> str:
        ug, cg = np.unique(rg, return_counts=True)
        up, cp = np.unique(rp, return_counts=True)
        in_p, in_g = counts_in(ug, up, cp), counts_in(up, ug, cg)
        missing, extra = ug[cg > in_p], up[cp > in_g]
        n_missing = int(np.sum(np.maximum(cg - in_p, 0)))
        n_extra = int(np.sum(np.maximum(cp - in_g, 0)))
        if not n_missing or not n_extra:
            return "rows differ within the tolerance"
        gi = int(np.flatnonzero(np.isin(rg, missing))[0])
        pi = int(np.flatnonzero(np.isin(rp, extra))[0])
        return (
            f"{n_missing} gold row(s) have no match in the prediction, e.g. row {gi + 1} "
            f"{self._row(self.G, gi)}; {n_extra} predicted row(s) match no gold row, e.g. "
            f"row {pi + 1} {self._row(self.P, pi)}"
        )

    def _success(self, assign: dict[int, int]) -> str:
        how = "in order" if self.ordered else "as a multiset"
        text = f"same {self.n} row(s) {how} over {len(self.G)} column(s)"
        moved = [i for i in range(len(self.G)) if assign[i] != self.pos[i]]
        if moved:
            where = ", ".join(
                f"{self._gname(i)}<-{assign[i] + 1} {self.P[assign[i]].name!r}" for i in moved
            )
            text += f"; columns mapped by content: {where}"
        return text


def _unmatched(cands: list[list[int]], n_right: int) -> int | None:
    """A gold column left out of a maximum one-to-one matching (None: all matched).

    A greedy pass settles the usual case (each gold column has one candidate of its
    own) without building the sparse matching problem; a greedy success is a full
    matching, a greedy failure proves nothing and goes to the exact matching.

    >>> _unmatched([[1], [0]], 2), _unmatched([[0, 1], [0]], 2), _unmatched([[0], [0]], 2)
    (None, None, 1)
    """
    if not cands:
        return None
    taken: set[int] = set()
    for c in cands:
        free = next((m for m in c if m not in taken), None)
        if free is None:
            break
        taken.add(free)
    else:
        return None
    rows, cols = [], []
    for i, c in enumerate(cands):
        rows += [i] * len(c)
        cols += c
    from scipy.sparse import csr_matrix  # scipy only when greedy column matching fails
    from scipy.sparse.csgraph import maximum_bipartite_matching

    adj = csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(cands), max(n_right, 1)))
    match = maximum_bipartite_matching(adj, perm_type="column")
    left = np.flatnonzero(match < 0)
    return int(left[0]) if len(left) else None
