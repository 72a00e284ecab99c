"""Option bundles of curate's commands (the shared ones live in score.cli_options)."""

from __future__ import annotations

from collections.abc import Callable

import click

from curate.sources import FORMAT_NAMES


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
    """``--test-fraction`` and ``--seed`` of the leakage-aware split (score.split)."""

    def apply(f: Callable) -> Callable:
        f = click.option("--seed", type=int, default=0, show_default=True, help="Split seed.")(f)
        return click.option(
            "--test-fraction",
            type=click.FloatRange(0.0, 1.0),
            default=0.5,
            show_default=True,
            help=fraction_help,
        )(f)

    return apply
