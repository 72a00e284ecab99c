"""A leaderboard's folder (``score compare RUN... --out``): its files made from run
folders read, written all at once, and what the API returns for them
(:class:`Leaderboard`).  Imports nothing heavy at its top: :mod:`score.api` names the
class; the machinery is imported when a leaderboard is made."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Leaderboard:
    """Two or more runs on the same tasks ranked: each run's EX (and TS, when the runs
    were scored with a test suite) with its bootstrap interval and rank, and every pair
    tested with exact McNemar, Holm-corrected (``leaderboard.json`` holds all of it)."""

    out: Path
    json: Path  # leaderboard.json
    markdown: Path  # leaderboard.md
    page: Path  # leaderboard.html
    data: dict[str, Any]  # leaderboard.json's content
    replaced: bool = False  # a leaderboard written there before was replaced

    @property
    def runs(self) -> tuple[dict[str, Any], ...]:
        """One entry per run, best EX first: name, EX, ex_ci, ex_rank (TS likewise)."""
        return tuple(self.data["runs"])

    @property
    def pairs(self) -> tuple[dict[str, Any], ...]:
        """One entry per pair of runs: its McNemar test per score, raw and Holm-adjusted."""
        return tuple(self.data["pairs"])

    @classmethod
    def written(cls, out: Path, files: dict[Path, str], replaced: bool) -> Leaderboard:
        """The leaderboard whose files (:func:`leaderboard_files`) were written in ``out``."""
        board = json.loads(files[out / "leaderboard.json"])
        pages = (out / "leaderboard.json", out / "leaderboard.md", out / "leaderboard.html")
        return cls(out, *pages, board, replaced)


def leaderboard_files(
    read: Sequence[dict[str, Any]],
    run_dirs: Sequence[Path],
    out: Path,
    meta: dict[str, str],
    *,
    seed: int,
    resamples: int,
) -> dict[Path, str]:
    """leaderboard.json, .md and .html of runs read (``read_run``) from ``run_dirs``, by
    the path each goes to in ``out``; ``meta`` is their meta lines
    (:func:`score.report.runs.meta_for`).  A ValueError says why the runs do not make one
    leaderboard."""
    from score.pages.leaderboard_page import leaderboard_page
    from score.report.leaderboard_markdown import render_leaderboard
    from score.scoring.run_folder import dumps
    from score.statistics.leaderboard import build_leaderboard, run_names

    names = run_names([str(d) for d in run_dirs])
    board = build_leaderboard(
        [r["records"] for r in read],
        names,
        metas=[r["meta"] for r in read],
        seed=seed,
        resamples=resamples,
    )
    board["meta"] = meta
    board["paths"] = {n: str(d) for n, d in zip(names, run_dirs, strict=True)}
    return {
        out / "leaderboard.json": dumps(board),
        out / "leaderboard.md": render_leaderboard(board, meta),
        out / "leaderboard.html": leaderboard_page(board, meta),
    }


def write_leaderboard(
    runs: Sequence[str | Path], out: str | Path, *, seed: int, resamples: int
) -> Leaderboard:
    """The leaderboard of the run folders ``runs`` written into the folder ``out`` (one
    that holds an earlier leaderboard is replaced; anything else there is refused).
    Errors are :class:`~score.errors.ScoringError`, naming the run that differs."""
    from score.errors import ScoringError
    from score.files import write_all_atomic
    from score.out_paths import check_output_dir, prior_folder
    from score.report.runs import LEADERBOARD_FILES, meta_for
    from score.scoring.run_folder import read_run

    run_dirs = [Path(r) for r in runs]
    if len(run_dirs) < 2:
        raise ScoringError(
            f"a leaderboard needs two or more run folders, not {len(run_dirs)}", stage="compare"
        )
    out = Path(out)
    check_output_dir(out, stage="compare")
    replaced = prior_folder(
        out,
        names=LEADERBOARD_FILES,
        marker=("leaderboard.json", ("sqlgold.leaderboard/",)),
        what="a leaderboard",
        stage="compare",
    )
    read = [read_run(d) for d in run_dirs]
    meta = meta_for(read, [str(d) for d in run_dirs], suites_may_differ=True)
    try:
        files = leaderboard_files(read, run_dirs, out, meta, seed=seed, resamples=resamples)
    except ValueError as e:
        raise ScoringError(str(e), stage="compare") from None
    write_all_atomic(files)
    return Leaderboard.written(out, files, bool(replaced))
