"""The summary of a page as plain HTML: figures with intervals, bar charts, small tables.

Every text that comes from data goes through :func:`esc`; the bars are CSS widths, so
the summary reads the same with scripts off.

>>> figure("EX", 0.5, (0.25, 0.75)).count("0.250 to 0.750")
1
>>> esc("<b>")
'&lt;b&gt;'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from score.pages.document import escape


def esc(value: Any) -> str:
    """A value as HTML text (markup escaped, bidi and other hidden characters shown)."""
    return escape("" if value is None else str(value))


def num(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def figure(label: str, value: Any, ci: Sequence[float] | None = None, digits: int = 3) -> str:
    """One headline figure, with its interval when it has one."""
    interval = (
        f'<div class="ci">95% CI {num(ci[0], digits)} to {num(ci[1], digits)}</div>' if ci else ""
    )
    return (
        f'<div class="figure"><div>{esc(label)}</div>'
        f'<div class="v">{esc(num(value, digits))}</div>{interval}</div>'
    )


def figures(items: Iterable[str]) -> str:
    return '<div class="figures">' + "".join(items) + "</div>"


def section(title: str, body: str) -> str:
    return f"<section><h2>{esc(title)}</h2>\n{body}\n</section>\n"


def meta_list(items: Mapping[str, Any]) -> str:
    """A line of facts: ``label value`` pairs."""
    return (
        '<dl class="meta">'
        + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in items.items() if v is not None)
        + "</dl>"
    )


def bars(
    title: str,
    rows: Iterable[tuple[str, float | None, Sequence[float] | None, str]],
    scale: float = 1.0,
) -> str:
    """A bar chart: one row per (label, value, interval or None, text shown at its end);
    values run from 0 to ``scale``."""
    cells = []
    for label, value, ci, text in rows:
        width = 0.0 if value is None or scale <= 0 else max(0.0, min(1.0, value / scale))
        whisker = ""
        if ci and scale > 0:
            low, high = (max(0.0, min(1.0, v / scale)) for v in ci)
            whisker = f'<i style="left:{low * 100:.1f}%;width:{(high - low) * 100:.1f}%"></i>'
        cells.append(
            f"<div>{esc(label)}</div>"
            f'<div class="bar" role="img" aria-label="{esc(label)}: {esc(text)}">'
            f'<span style="width:{width * 100:.1f}%"></span>{whisker}</div>'
            f'<div class="num">{esc(text)}</div>'
        )
    return f'<div><h3>{esc(title)}</h3><div class="bars">' + "".join(cells) + "</div></div>"


def count_bars(title: str, counts: Mapping[str, int]) -> str:
    """A bar chart of counts, largest first (ties by name)."""
    top = max(counts.values(), default=0)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return bars(title, ((k, float(v), None, str(v)) for k, v in ordered), scale=float(top))


def table(
    header: Sequence[str], rows: Iterable[Sequence[Any]], numeric: Sequence[bool] = ()
) -> str:
    """A plain table; ``numeric[i]`` right-aligns column ``i``."""

    def cls(i: int) -> str:
        return ' class="num"' if i < len(numeric) and numeric[i] else ""

    head = "".join(f'<th scope="col"{cls(i)}>{esc(h)}</th>' for i, h in enumerate(header))
    body = "".join(
        "<tr>" + "".join(f"<td{cls(i)}>{esc(num(v))}</td>" for i, v in enumerate(r)) + "</tr>"
        for r in rows
    )
    return f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'
