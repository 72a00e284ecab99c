"""Option bundles of curate's commands (the shared ones live in score.cli.options)."""

from __future__ import annotations

from collections.abc import Callable

import click

from curate.sources import FORMAT_NAMES
from score.cli.options import split_options as score_split_options


def source_format_option(help: str) -> Callable:
    """``--format`` of source records: one of the importers."""
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(FORMAT_NAMES),
        default="jsonl",
        show_default=True,
        help=help,
    )


def split_options(fraction_help: str) -> Callable:
    """``--test-fraction`` and ``--seed`` of the leakage-aware split (score.inputs.split)."""
    return score_split_options(fraction_help, seed_flag="--seed")
