"""What the grounding documents share: running a shown example, and Markdown pieces.

Every SQL example a grounding document shows is executed while the document is
generated, through the same read-only :class:`~score.execution.executor.Executor` that scores
answers; an example that fails or returns no rows stops the generation
(:class:`GroundingError`), so a document never shows SQL that does not run.

The formatting helpers are pure and deterministic, so a document is byte-identical
whenever its data are:

>>> format_value(None), format_value(2.5), format_value("a|b")
('NULL', '2.5', 'a\\\\|b')
>>> print(markdown_table(["n", "name"], [(1, "MALE")]))
| n | name |
|---|---|
| 1 | MALE |
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.comparison.cell_text import typed_text
from score.errors import SqlgoldError
from score.execution.executor import Executor
from score.execution.result import QueryError
from score.files import write_atomic

#: Rows of an example's result a document shows.
SHOWN_ROWS = 5
#: Longest text value shown in a table cell before it is cut.
MAX_TEXT = 60


class GroundingError(SqlgoldError):
    """A grounding document cannot be generated (an example failed or returned nothing)."""

    stage = "grounding"


@dataclass(frozen=True)
class ExampleRun:
    """An example query and the first rows it returned."""

    sql: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]  # the first SHOWN_ROWS rows
    total_rows: int


def run_example(executor: Executor, sql: str, *, what: str = "example") -> ExampleRun:
    """Run ``sql``; raise :class:`GroundingError` if it fails or returns no rows."""
    try:
        result = executor.execute(sql)
    except QueryError as e:
        raise GroundingError(f"{what} failed ({e.kind}: {e.message}):\n{sql}") from None
    if result.num_rows == 0:
        raise GroundingError(f"{what} returned no rows:\n{sql}")
    rows = tuple(tuple(r) for r in result.rows()[:SHOWN_ROWS])
    return ExampleRun(sql.strip(), tuple(result.columns), rows, result.num_rows)


def format_value(value: Any, max_text: int = MAX_TEXT) -> str:
    """A value as a Markdown table cell: NULL, ISO dates, cut long text, ``|`` escaped."""
    typed = typed_text(value)
    if typed is not None:
        return typed
    if isinstance(value, dt.timedelta):
        return f"{value.days} days" if not value.seconds else str(value)
    text = str(value).replace("\n", " ")
    if len(text) > max_text:
        text = text[: max_text - 1] + "…"
    return text.replace("|", "\\|")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table; cells go through :func:`format_value` unless already str."""
    lines = [
        "| " + " | ".join(columns) + " |",
        "|" + "---|" * len(columns),
    ]
    for row in rows:
        cells = (c if isinstance(c, str) else format_value(c) for c in row)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def code_block(sql: str, language: str = "sql") -> str:
    return f"```{language}\n{sql.strip()}\n```"


def render_run(run: ExampleRun) -> str:
    """The SQL of a run and the rows it returned, as Markdown."""
    shown = len(run.rows)
    if run.total_rows > shown:
        caption = f"Result (first {shown} of {run.total_rows:,} rows):"
    else:
        caption = f"Result ({run.total_rows:,} row{'s' if run.total_rows != 1 else ''}):"
    table = markdown_table(run.columns, [tuple(format_value(v) for v in r) for r in run.rows])
    return f"{code_block(run.sql)}\n\n{caption}\n\n{table}"


def plural(n: int, word: str) -> str:
    """``1 row``, ``2 rows``, ``1,130 persons``.

    >>> plural(1, "row"), plural(1130, "row")
    ('1 row', '1,130 rows')
    """
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def atomic_write(path: Path, text: str) -> bool:
    """Write ``text`` (UTF-8, as given) to ``path`` through a temporary file and a
    rename; leave the file untouched if it already holds exactly that text.  Returns
    whether the file was written."""
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return False
    write_atomic(path, data)
    return True
