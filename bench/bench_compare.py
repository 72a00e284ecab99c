"""Figures 2 and 3: comparator cost against a naive baseline, and wide results.

Figure 2 compares two equal results, the prediction being the gold's rows shuffled,
at several row counts, 8 columns: BIGINT ids, INTEGER with 10% NULL, DOUBLE, DOUBLE
with 10% NULL, VARCHAR, VARCHAR with 10% NULL, DATE, DATE with 10% NULL.  Both tables
are cut into 2,048-row chunks, as the executor delivers results.  The naive baseline,
written here, converts every row to a tuple of strings, sorts both lists and compares
them (Arrow -> Python lists included, as the comparators get Arrow too).

Figure 3 compares results with 2, 6, 10 and 14 columns where the prediction's columns
are a permutation of the gold's (and its rows shuffled), in two variants:

* ``same_multiset``: every column is its own shuffle of the same integers 0..n-1, so
  no per-column content signature tells two columns apart (the worst case for mapping
  columns by content; a comparator trying every permutation would face 14! of them);
* ``typed``: columns cycle through BIGINT, DOUBLE, VARCHAR and DATE with different
  contents, the ordinary case.

Each profile runs in its own child process (a fresh ``python bench/bench_compare.py
worker ...``), which prints one JSON line per measured cell.  A cell is a (profile,
size) pair.  Each child first makes one untimed comparison of 200 rows (imports and
first-call set-up are not billed), and one untimed comparison at each size before the
timed ones (the first touch of memory the heap has not reached yet cost up to 1.7 times
the steady time at 1M rows); every comparison gets fresh :class:`QueryResult`
objects, so no cached Python rows carry over between runs.

The time budget: before a cell runs, its time is predicted from the profile's previous
cells (a power law through the last two, exponent at least 1, or 2 when only one is
known); a cell predicted to take longer than the budget for one comparison is not run
and is reported as skipped with its prediction.  The parent kills a child that
overruns its whole allowance.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from bench_common import log, median, run_child

from score.comparison.compare import compare, profile_names
from score.execution.result import QueryResult

CHUNK = 2048  # the executor's Arrow batch size
PROBE_ROWS = 1000
WARMUP_ROWS = 200
TIE_PROFILES = ("any_k_from_tie_set", "any_one_argmax")


# -- data ----------------------------------------------------------------------------


def _chunked(table: pa.Table) -> pa.Table:
    return pa.Table.from_batches(table.to_batches(max_chunksize=CHUNK), schema=table.schema)


def _with_nulls(values: np.ndarray, rng: np.random.Generator, arrow_type=None) -> pa.Array:
    return pa.array(values, type=arrow_type, mask=rng.random(len(values)) < 0.1)


def eight_columns(n: int, seed: int = 0) -> tuple[pa.Table, pa.Table, tuple[str, ...]]:
    """A gold table of ``n`` rows by 8 columns and the same rows shuffled."""
    rng = np.random.default_rng(seed)
    text_ids = rng.integers(0, n, n)
    cols = {
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "k": _with_nulls(rng.integers(0, 1000, n).astype(np.int32), rng),
        "x": pa.array(rng.normal(size=n) * 1000),
        "y": _with_nulls(rng.random(n), rng),
        "name": pa.array([f"name-{v}" for v in text_ids]),
        "code": _with_nulls(
            np.array([f"code{v % 977}" for v in text_ids], dtype=object), rng, pa.string()
        ),
        "day": pa.array(rng.integers(0, 20000, n).astype(np.int32)).cast(pa.date32()),
        "end_day": _with_nulls(rng.integers(0, 20000, n).astype(np.int32), rng, pa.int32()).cast(
            pa.date32()
        ),
    }
    types = ("BIGINT", "INTEGER", "DOUBLE", "DOUBLE", "VARCHAR", "VARCHAR", "DATE", "DATE")
    gold = pa.table(cols)
    pred = gold.take(pa.array(rng.permutation(n)))
    return _chunked(gold), _chunked(pred), types


def wide_columns(
    n: int, width: int, variant: str, seed: int = 0
) -> tuple[pa.Table, pa.Table, tuple[str, ...]]:
    """``width`` columns; the prediction has them permuted and its rows shuffled."""
    rng = np.random.default_rng(seed + width)
    arrays, types = [], []
    for j in range(width):
        if variant == "same_multiset":
            arrays.append(pa.array(rng.permutation(n).astype(np.int64)))
            types.append("BIGINT")
            continue
        kind = j % 4
        base = rng.integers(0, 10 * n, n)
        if kind == 0:
            arrays.append(pa.array(base.astype(np.int64)))
            types.append("BIGINT")
        elif kind == 1:
            arrays.append(pa.array(base / 7.0))
            types.append("DOUBLE")
        elif kind == 2:
            arrays.append(pa.array([f"v{j}-{v}" for v in base]))
            types.append("VARCHAR")
        else:
            arrays.append(pa.array((base % 30000).astype(np.int32)).cast(pa.date32()))
            types.append("DATE")
    names = [f"c{j}" for j in range(width)]
    gold = pa.Table.from_arrays(arrays, names=names)
    order = rng.permutation(width)
    if width > 1:
        while (order == np.arange(width)).all():  # a real permutation, not the identity
            order = rng.permutation(width)
    pred = gold.select([int(j) for j in order]).take(pa.array(rng.permutation(n)))
    pred = pred.rename_columns([f"p{j}" for j in range(width)])
    pred_types = tuple(types[int(j)] for j in order)
    return _chunked(gold), _chunked(pred), (tuple(types), pred_types)


# -- what is timed ---------------------------------------------------------------------


def naive_equal(gold: pa.Table, pred: pa.Table) -> bool:
    """The naive baseline: every row a tuple of strings, both lists sorted, compared."""

    def rows(t: pa.Table) -> list[tuple[str, ...]]:
        cols = [c.to_pylist() for c in t.columns]
        return sorted(tuple(str(v) for v in row) for row in zip(*cols, strict=True))

    return rows(gold) == rows(pred)


def _one(profile: str, gold: pa.Table, pred: pa.Table, types) -> tuple[float, bool, str]:
    gold_types, pred_types = types if isinstance(types[0], tuple) else (types, types)
    g = QueryResult(tuple(gold.column_names), gold_types, gold)
    p = QueryResult(tuple(pred.column_names), pred_types, pred)
    options = {"tie_k": pred.num_rows} if profile == "any_k_from_tie_set" else {}
    gc.collect()
    start = time.perf_counter()
    if profile == "naive":
        match, reason = naive_equal(gold, pred), "naive sorted string tuples"
    else:
        verdict = compare(g, p, profile, **options)
        match, reason = verdict.match, verdict.reason
    return time.perf_counter() - start, match, reason


def _predict(done: list[tuple[float, float]], x: float) -> float | None:
    """Seconds predicted at size ``x`` from the (size, seconds) cells measured so far."""
    if not done:
        return None
    (x1, t1) = done[-1]
    if len(done) >= 2:
        (x0, t0) = done[-2]
        slope = math.log(max(t1, 1e-6) / max(t0, 1e-6)) / math.log(x1 / x0)
        exponent = max(1.0, slope)
    else:
        exponent = 2.0
    return t1 * (x / x1) ** exponent


def worker(
    figure: str, profile: str, sizes: list[int], runs: int, budget: float, variant: str, rows: int
) -> None:
    """Measure one profile's ladder of cells; print one JSON line per cell."""
    # one untimed comparison first, so lazy imports and first-call set-up are not billed
    if figure == "comparator":
        _one(profile, *eight_columns(WARMUP_ROWS, seed=1))
    else:
        _one(profile, *wide_columns(WARMUP_ROWS, max(sizes), variant, seed=1))
    done: list[tuple[float, float]] = []
    for size in sizes:
        predicted = _predict(done, size)
        cell: dict[str, Any] = {"size": size}
        if predicted is not None and predicted > budget:
            cell.update(skipped=True, predicted_seconds=round(predicted, 1))
            print(json.dumps(cell), flush=True)
            continue
        if figure == "comparator":
            gold, pred, types = eight_columns(size)
        else:
            gold, pred, types = wide_columns(rows, size, variant)
        _one(profile, gold, pred, types)  # untimed: the heap grows to this size first
        seconds, match, reason = [], None, ""
        for _ in range(runs):
            s, match, reason = _one(profile, gold, pred, types)
            seconds.append(s)
            if s > budget:  # one over-budget run is enough to report
                break
        del gold, pred
        cell.update(
            seconds=median(seconds),
            runs=len(seconds),
            all_seconds=seconds,
            match=match,
            reason=reason[:200],
        )
        print(json.dumps(cell), flush=True)
        done.append((size, cell["seconds"]))


# -- the parent's side -----------------------------------------------------------------


def _ladder(
    figure: str,
    profile: str,
    sizes: list[int],
    runs: int,
    budget: float,
    variant: str = "-",
    rows: int = 0,
) -> dict[int, dict[str, Any]]:
    argv = [
        str(Path(__file__)),
        "worker",
        figure,
        profile,
        ",".join(map(str, sizes)),
        str(runs),
        str(budget),
        variant,
        str(rows),
    ]
    allowance = 120 + len(sizes) * (runs * budget + 60)
    start = time.perf_counter()
    lines, killed, err = run_child(argv, timeout=allowance)
    cells = {}
    for line in lines:
        cell = json.loads(line)
        cells[cell["size"]] = cell
    for size in sizes:
        if size not in cells:
            why = (
                f"killed: the child overran its {allowance:.0f} s allowance"
                if killed
                else f"the child failed: {err[-300:]}"
            )
            cells[size] = {"size": size, "skipped": True, "reason": why}
    log(
        f"  {figure} {profile}{'' if variant == '-' else ' ' + variant}: "
        + ", ".join(_show(c) for c in cells.values())
        + f" ({time.perf_counter() - start:.0f} s)"
    )
    return cells


def _show(cell: dict[str, Any]) -> str:
    if cell.get("skipped"):
        got = cell.get("predicted_seconds")
        return f"{cell['size']}: skipped" + (f" (~{got:g} s)" if got is not None else "")
    flag = "" if cell["match"] else " NO MATCH"
    return f"{cell['size']}: {cell['seconds']:.3f} s{flag}"


def comparator_cost(rows: list[int], runs: int, budget: float) -> dict[str, Any]:
    """Figure 2: seconds per profile and row count, and the naive baseline."""
    sizes = sorted({PROBE_ROWS, *rows})
    log(
        f"comparator: {', '.join(map(str, sizes))} rows x 8 columns, {runs} runs, "
        f"budget {budget:g} s per comparison"
    )
    cells = {p: _ladder("comparator", p, sizes, runs, budget) for p in ("naive", *profile_names())}
    seconds = {p: {str(s): c.get("seconds") for s, c in by.items()} for p, by in cells.items()}
    big, prev = str(max(rows)), str(sorted(rows)[-2]) if len(rows) > 1 else None
    naive_big = seconds["naive"][big]

    def ratio(a, b):
        return a / b if a is not None and b else None

    return {
        "rows": sizes,
        "columns": 8,
        "runs": runs,
        "budget_seconds": budget,
        "seconds": seconds,
        "speedup_vs_naive_at_max": {p: ratio(naive_big, s[big]) for p, s in seconds.items()},
        "growth_max_over_previous": (
            {p: ratio(s[big], s[prev]) for p, s in seconds.items()} if prev else {}
        ),
        "n_log_n_growth": (int(big) * math.log(int(big))) / (int(prev) * math.log(int(prev)))
        if prev
        else None,
        "cells": {p: {str(s): c for s, c in by.items()} for p, by in cells.items()},
    }


def wide_cost(rows: int, widths: list[int], runs: int, budget: float) -> dict[str, Any]:
    """Figure 3: seconds per column count, per variant and profile."""
    # bird, set and ehrsql2024 need the same column order, so a permutation is a fast
    # "no match" for them; the tie adapters are quadratic in rows (figure 2)
    profiles = [p for p in profile_names() if p not in TIE_PROFILES]
    log(f"wide: {rows} rows, {', '.join(map(str, widths))} permuted columns, {runs} runs")
    out: dict[str, Any] = {"rows": rows, "widths": widths, "runs": runs, "variants": {}}
    for variant in ("same_multiset", "typed"):
        cells = {p: _ladder("wide", p, widths, runs, budget, variant, rows) for p in profiles}
        out["variants"][variant] = {
            "seconds": {
                p: {str(w): c.get("seconds") for w, c in by.items()} for p, by in cells.items()
            },
            "cells": {p: {str(w): c for w, c in by.items()} for p, by in cells.items()},
        }
    out["excluded_profiles"] = {
        p: "quadratic in rows; see the comparator figure" for p in TIE_PROFILES
    }
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("worker")
    w.add_argument("figure", choices=["comparator", "wide"])
    w.add_argument("profile")
    w.add_argument("sizes")
    w.add_argument("runs", type=int)
    w.add_argument("budget", type=float)
    w.add_argument("variant")
    w.add_argument("rows", type=int)
    args = parser.parse_args(argv)
    worker(
        args.figure,
        args.profile,
        [int(s) for s in args.sizes.split(",")],
        args.runs,
        args.budget,
        args.variant,
        args.rows,
    )


if __name__ == "__main__":
    main(sys.argv[1:])
