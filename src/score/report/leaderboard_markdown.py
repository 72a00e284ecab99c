"""leaderboard.md and the lines ``score compare`` prints: a leaderboard
(:func:`score.statistics.leaderboard.build_leaderboard`) as text.

Numbers are written with fixed decimals (scores 3, p-values 4 significant digits), and
the text depends on its inputs only (no clock, no paths beyond the meta lines), so the
same leaderboard gives the same bytes.

>>> from score.statistics.metrics import record
>>> from score.statistics.leaderboard import build_leaderboard
>>> a = [record("q1", "correct"), record("q2", "correct")]
>>> b = [record("q1", "correct"), record("q2", "mismatch")]
>>> board = build_leaderboard([a, b], ["a", "b"], resamples=100)
>>> [line for line in leaderboard_lines(board) if line.startswith("1 ")]
['1     a    1.000 [1.000, 1.000]']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from score.statistics.leaderboard import LEADERBOARD_FORMAT, SCORE_NAMES

NONE = "–"


def _number(value: float | None, digits: int = 3) -> str:
    if value is None:
        return NONE
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _ci(ci: Sequence[float] | None) -> str:
    return NONE if not ci else f"[{_number(ci[0])}, {_number(ci[1])}]"


def p_text(p: float) -> str:
    """A p-value with 4 significant digits.

    >>> p_text(0.000012345), p_text(1.0)
    ('1.234e-05', '1')
    """
    return f"{p:.4g}"


def _md(text: Any) -> str:
    """A table cell: pipes escaped, line breaks made spaces."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]


def check_board(board: Mapping[str, Any]) -> None:
    if board.get("format") != LEADERBOARD_FORMAT:
        raise ValueError(
            f"leaderboard format {board.get('format')!r}, expected {LEADERBOARD_FORMAT!r}"
        )


def shown_scores(board: Mapping[str, Any]) -> list[str]:
    """The scores the leaderboard ranks, in order (EX, then TS when there is one)."""
    return list(board["scores"])


def run_table(board: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The leaderboard's header and rows (one per run, in the board's order)."""
    scores = shown_scores(board)
    header = ["Run", "Tasks", "Answerable"]
    for s in scores:
        name = SCORE_NAMES[s]
        header += [f"Rank ({name})", name, f"{name} 95% CI"]
    rows = []
    for r in board["runs"]:
        row = [str(r["name"]), str(r["n_tasks"]), str(r["n_answerable"])]
        for s in scores:
            rank = r.get(f"{s}_rank")
            row += [NONE if rank is None else str(rank), _number(r.get(s)), _ci(r.get(f"{s}_ci"))]
        rows.append(row)
    return header, rows


def pair_table(board: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """The pairwise tests: one row per pair and score."""
    header = ["A", "B", "Score", "b", "c", "A - B", "95% CI", "p", "p (Holm)", "Differs"]
    rows = []
    for s in shown_scores(board):
        for pair in board["pairs"]:
            t = pair.get(s)
            if t is None:
                continue
            rows.append(
                [str(pair["a"]), str(pair["b"]), SCORE_NAMES[s], str(t["b"]), str(t["c"]),
                 _number(t["diff"]), _ci(t["diff_ci"]), p_text(t["p_value"]),
                 p_text(t["p_holm"]), "yes" if t["differs"] else "no"]
            )  # fmt: skip
    return header, rows


def render_leaderboard(board: Mapping[str, Any], meta: Mapping[str, str]) -> str:
    """leaderboard.md: the meta lines, the table of runs, and the pairwise tests."""
    check_board(board)
    boot = board["bootstrap"]
    runs = board["runs"]
    first = runs[0]
    lines = [
        "# Leaderboard",
        "",
        *(f"- {key.replace('_', ' ').capitalize()}: {value}" for key, value in meta.items()),
        f"- Runs: {len(runs)}, each scored on the same {first['n_instances']} instance(s) "
        f"({first['n_tasks']} task(s), {first['n_answerable']} answerable); "
        f"{board['n_gold_error_excluded']} left out (gold error or gold drift in some run)",
        f"- Intervals: {boot['confidence']:.0%} percentile bootstrap, {boot['resamples']:,} "
        f"resamples of questions (all languages of a question together), seed {boot['seed']} "
        f"({boot['generator']}); one set of draws for every run",
        f"- Ranks: {board['rank_rule']}",
        "",
    ]
    for s, text in board["scores"].items():
        lines.append(f"{SCORE_NAMES[s]} is {text}.")
    if board.get("ts_note"):
        lines.append(f"TS: {board['ts_note']}.")
    header, rows = run_table(board)
    lines += ["", *_table(header, rows), "", "## Pairwise tests", ""]
    lines += [f"Test: {board['test']}.", "", f"Correction: {board['correction']}.", ""]
    header, rows = pair_table(board)
    lines += [*_table(header, rows), ""]
    return "\n".join(lines)


def leaderboard_lines(board: Mapping[str, Any]) -> list[str]:
    """The leaderboard in brief, as ``score compare`` prints it: one line per run (its EX
    rank, name, EX with interval, TS when shown) and how many pairs differ."""
    check_board(board)
    scores = shown_scores(board)
    width = max(3, *(len(str(r["name"])) for r in board["runs"]))
    head = "rank  " + "run".ljust(width) + "  " + "  ".join(f"{SCORE_NAMES[s]:<21}" for s in scores)
    lines = [head.rstrip()]
    for r in board["runs"]:
        rank = r.get("ex_rank")
        cells = [f"{_number(r.get(s))} {_ci(r.get(f'{s}_ci'))}" for s in scores]
        line = f"{NONE if rank is None else rank:<5} {str(r['name']).ljust(width)}  " + "  ".join(
            f"{c:<21}" for c in cells
        )
        lines.append(line.rstrip())
    for s in scores:
        tests = [p[s] for p in board["pairs"] if s in p]
        differ = sum(1 for t in tests if t["differs"])
        lines.append(
            f"{SCORE_NAMES[s]}: {differ} of {len(tests)} pair(s) differ at {board['alpha']} "
            "(exact McNemar, Holm-corrected)"
        )
    return lines
