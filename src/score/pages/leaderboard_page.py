"""The page of a leaderboard (``score compare`` with two or more runs): the runs ranked
with their intervals drawn, the pairwise tests, and a table of the runs (one row each,
sortable by any column) that opens to each run's own tests.

Everything comes from ``leaderboard.json``'s content
(:func:`score.statistics.leaderboard.build_leaderboard`) and the meta lines of the runs;
the page is assembled as every review page is (:mod:`score.pages.document`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from score.pages.document import render_page
from score.pages.parts import bars, esc, meta_list, section, table
from score.report.leaderboard_markdown import (
    check_board,
    p_text,
    pair_table,
    run_table,
    shown_scores,
)
from score.statistics.leaderboard import SCORE_NAMES

PAGE_FILE = "leaderboard.html"


def leaderboard_summary(board: Mapping[str, Any], meta: Mapping[str, str]) -> str:
    """The page's summary, plain HTML: meta, the ranked table and bars, the tests."""
    boot = board["bootstrap"]
    first = board["runs"][0]
    facts = {
        **{k.replace("_", " "): v for k, v in meta.items()},
        "runs": len(board["runs"]),
        "instances": f"{first['n_instances']} ({first['n_tasks']} tasks, "
        f"{first['n_answerable']} answerable; {board['n_gold_error_excluded']} left out)",
        "intervals": f"{boot['confidence']:.0%} percentile bootstrap over questions, "
        f"{boot['resamples']:,} resamples, seed {boot['seed']}",
    }
    notes = "".join(
        f"<p>{esc(SCORE_NAMES[s])} is {esc(text)}.</p>" for s, text in board["scores"].items()
    )
    if board.get("ts_note"):
        notes += f'<p class="note">TS: {esc(board["ts_note"])}.</p>'
    notes += f'<p class="note">Ranks: {esc(board["rank_rule"])}.</p>'
    header, rows = run_table(board)
    numeric = [False] + [True] * (len(header) - 1)
    charts = "".join(
        bars(
            f"{SCORE_NAMES[s]} with its 95% CI",
            (
                (str(r["name"]), r.get(s), r.get(f"{s}_ci"), _score_text(r.get(s)))
                for r in board["runs"]
            ),
        )
        for s in shown_scores(board)
    )
    ranked = (
        meta_list(facts)
        + notes
        + table(header, rows, numeric)
        + f'<div class="charts">{charts}</div>'
    )
    p_header, p_rows = pair_table(board)
    tests = f"<p>{esc(board['test'])}.</p><p>{esc(board['correction'])}.</p>" + table(
        p_header, p_rows, [False, False, False] + [True] * 6 + [False]
    )
    return section("Leaderboard", ranked) + section("Pairwise tests", tests)


def _score_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _columns(board: Mapping[str, Any]) -> list[str]:
    cols = ["run", "tasks"]
    for s in shown_scores(board):
        name = SCORE_NAMES[s]
        cols += [f"rank {name}", name, f"{name} 95% CI"]
    return cols


def _run_rows(board: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row of the script's table per run, opening to its facts and its tests."""
    scores = shown_scores(board)
    out = []
    for r in board["runs"]:
        cells: list[Any] = [str(r["name"]), r["n_tasks"]]  # the first is the row's id
        for s in scores:
            ci = r.get(f"{s}_ci")
            cells += [r.get(f"{s}_rank"), _score_text(r.get(s)),
                      "-" if not ci else f"{ci[0]:.3f} to {ci[1]:.3f}"]  # fmt: skip
        tests = []
        for s in scores:
            for pair in board["pairs"]:
                t = pair.get(s)
                if t is None or r["name"] not in (pair["a"], pair["b"]):
                    continue
                tests.append(
                    [SCORE_NAMES[s], str(pair["a"]), str(pair["b"]), str(t["b"]), str(t["c"]),
                     p_text(t["p_value"]), p_text(t["p_holm"]), "yes" if t["differs"] else "no"]
                )  # fmt: skip
        facts = [
            ["run label", str(r.get("run"))],
            ["instances", str(r["n_instances"])],
            ["answerable", str(r["n_answerable"])],
            ["test suite", "yes" if r.get("suite") else "no"],
        ]
        out.append(
            {
                "id": str(r["name"]),
                "c": cells,
                "d": [
                    {"t": "kv", "label": "run", "items": facts},
                    {
                        "t": "rows",
                        "label": "pairwise tests",
                        "columns": ["score", "A", "B", "b", "c", "p", "p (Holm)", "differs"],
                        "rows": tests,
                        "total": len(tests),
                    },
                ],
            }
        )
    return out


def leaderboard_page(board: Mapping[str, Any], meta: Mapping[str, str]) -> str:
    """The whole page of ``board`` (leaderboard.json's content) and the runs' meta lines."""
    check_board(board)
    data = {
        "kind": "leaderboard",
        "columns": [{"key": c.replace(" ", "_"), "label": c} for c in _columns(board)],
        "filters": [],
        "rows": _run_rows(board),
    }
    names = ", ".join(str(r["name"]) for r in board["runs"])
    return render_page(
        f"sqlgold leaderboard: {names}", leaderboard_summary(board, meta), data, "Runs"
    )
