"""The report's chart as SVG text: EX per tier for each run with its bootstrap interval,
and the discordant counts of a paired comparison.

Hand-written SVG (no plotting library): grouped bars, one group for all instances and
one per tier, one bar per run (models in colour-blind-safe colours, priors hatched grey),
an error bar for each interval, a legend below, and a small panel with ``b`` and ``c``.
Coordinates are printed with one decimal, so the same inputs give the same bytes.

>>> from score.statistics.metrics import record
>>> from score.statistics.summary import summarize
>>> svg = render_chart([summarize([record("q1", "correct")], resamples=50)])
>>> svg.startswith("<svg") and svg.rstrip().endswith("</svg>")
True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from score.report.markdown import check_inputs, p_clause, run_label
from score.statistics.metrics import group_order

#: Okabe-Ito colours for models; priors are hatched in greys.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000")
PRIOR_GREYS = ("#7a7a7a", "#b0b0b0", "#4d4d4d")

FONT = "DejaVu Sans, Verdana, Arial, sans-serif"
PLOT_HEIGHT = 220
BAR, BAR_GAP, GROUP_PAD = 22, 4, 26
LEFT, RIGHT, TOP = 64, 24, 58


def _text_width(text: str, size: float) -> float:
    """A generous estimate of rendered width (sans-serif averages ~0.6 em per character)."""
    return len(text) * size * 0.62


def _f(x: float) -> str:
    return f"{x:.1f}"


def _text(
    x: float,
    y: float,
    text: str,
    *,
    size: int = 12,
    anchor: str = "start",
    fill: str = "#222",
    weight: str | None = None,
    extra: str = "",
) -> str:
    bold = f' font-weight="{weight}"' if weight else ""
    return (
        f'<text x="{_f(x)}" y="{_f(y)}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}"{bold}{extra}>{escape(text)}</text>'
    )


def _fill(index: int, prior: bool) -> str:
    return f"url(#prior{index})" if prior else PALETTE[index % len(PALETTE)]


def _groups(runs: Sequence[Mapping[str, Any]]) -> list[tuple[str, str, list[Mapping[str, Any]]]]:
    """(label, n label, block of each run) for 'all' and each tier where some run has an EX."""
    tiers = sorted({t for s in runs for t in s.get("by_tier", {})}, key=group_order)
    groups = [("all", runs)] + [(t, [s.get("by_tier", {}).get(t, {}) for s in runs]) for t in tiers]
    out = []
    for label, blocks in groups:
        if any(b.get("ex") is not None for b in blocks):
            sizes = sorted({b.get("n_answerable", 0) for b in blocks})
            out.append((label, "n = " + " / ".join(map(str, sizes)), list(blocks)))
    return out


def _slots(groups, n_runs: int, min_width: float) -> list[float]:
    """The width of each group's slot: one width for all, room for the bars and the
    widest label, widened so the plot spans at least ``min_width``."""
    bars = n_runs * BAR + (n_runs - 1) * BAR_GAP
    widest = max(
        (max(_text_width(label, 12), _text_width(n_label, 10)) for label, n_label, _ in groups),
        default=0.0,
    )
    slot = max(bars, widest) + GROUP_PAD
    if groups:
        slot = max(slot, min_width / len(groups))
    return [slot] * len(groups)


def _bars(groups, fills, slots: Sequence[float], y0: float) -> list[str]:
    """Bars, error bars, value labels and group labels; y0 is the plot's top edge."""
    parts: list[str] = []
    bars_w = len(fills) * BAR + (len(fills) - 1) * BAR_GAP
    base = y0 + PLOT_HEIGHT

    def y(v: float) -> float:
        return base - v * PLOT_HEIGHT

    if not groups:
        return [_text(LEFT + 12, base - 12, "no answerable instances")]
    left = LEFT
    for (label, n_label, blocks), slot in zip(groups, slots, strict=True):
        mid = left + slot / 2
        for i, block in enumerate(blocks):
            x = mid - bars_w / 2 + i * (BAR + BAR_GAP)
            cx = x + BAR / 2
            ex = block.get("ex")
            if ex is None:
                parts.append(_text(cx, base - 4, "n/a", size=9, anchor="middle", fill="#666"))
                continue
            parts.append(
                f'<rect class="bar" x="{_f(x)}" y="{_f(y(ex))}" width="{BAR}" '
                f'height="{_f(base - y(ex))}" fill="{fills[i]}" stroke="#333" stroke-width="0.6"/>'
            )
            parts.append(
                f'<line x1="{_f(x)}" y1="{_f(y(ex))}" x2="{_f(x + BAR)}" y2="{_f(y(ex))}" '
                f'stroke="#333" stroke-width="1.5"/>'
            )
            ci = block.get("ex_ci")
            top = y(ex)
            if ci is not None:
                lo, top = y(ci[0]), y(ci[1])
                parts.append(
                    f'<path class="ci" d="M{_f(cx)} {_f(lo)}V{_f(top)}'
                    f"M{_f(cx - 4)} {_f(lo)}H{_f(cx + 4)}M{_f(cx - 4)} {_f(top)}H{_f(cx + 4)}"
                    '" stroke="#111" stroke-width="1.2" fill="none"/>'
                )
            parts.append(_text(cx, top - 4, f"{ex:.2f}", size=9, anchor="middle", fill="#333"))
        parts.append(_text(mid, base + 18, label, anchor="middle"))
        parts.append(_text(mid, base + 32, n_label, size=10, anchor="middle", fill="#555"))
        left += slot
    return parts


def _axis(right: float, y0: float) -> list[str]:
    base = y0 + PLOT_HEIGHT
    parts = []
    for k in range(6):
        v = k / 5
        yy = base - v * PLOT_HEIGHT
        parts.append(
            f'<line x1="{LEFT}" y1="{_f(yy)}" x2="{_f(right)}" y2="{_f(yy)}" '
            f'stroke="{"#444" if k == 0 else "#e3e3e3"}" stroke-width="1"/>'
        )
        parts.append(_text(LEFT - 6, yy + 4, f"{v:.1f}", size=11, anchor="end", fill="#444"))
    mid = y0 + PLOT_HEIGHT / 2
    parts.append(
        _text(
            18, mid, "EX", size=12, anchor="middle", extra=f' transform="rotate(-90 18 {_f(mid)})"'
        )
    )
    return parts


def _legend(names: Sequence[str], fills: Sequence[str], y0: float) -> list[str]:
    parts = []
    for i, (name, fill) in enumerate(zip(names, fills, strict=True)):
        yy = y0 + i * 18
        parts.append(
            f'<rect x="{LEFT}" y="{_f(yy)}" width="12" height="12" fill="{fill}" '
            f'stroke="#333" stroke-width="0.6"/>'
        )
        parts.append(_text(LEFT + 18, yy + 10, name))
    return parts


def _panel(cmp: Mapping[str, Any], y0: float) -> tuple[list[str], float, float]:
    """The comparison panel's parts, the width it needs and the bottom of the chart."""
    lines = [f"A = {cmp.get('run_a') or 'A'}", f"B = {cmp.get('run_b') or 'B'}"]
    footer = f"exact McNemar p {p_clause(cmp['p_value'])} on {cmp['n']} paired instances"
    title = "Paired comparison: discordant instances"
    parts = [_text(LEFT, y0, title, size=13, weight="bold")]
    parts += [_text(LEFT, y0 + 18 + 16 * i, line) for i, line in enumerate(lines)]
    top = y0 + 18 + 16 * len(lines) + 6
    rows = [
        ("A right, B wrong (b)", cmp["b"], "#4d4d4d"),
        ("A wrong, B right (c)", cmp["c"], "#a3a3a3"),
    ]
    label_w, bar_max = 150, 220
    most = max(cmp["b"], cmp["c"], 1)
    for i, (label, count, color) in enumerate(rows):
        yy = top + i * 24
        bar = bar_max * count / most
        parts.append(_text(LEFT, yy + 13, label))
        parts.append(
            f'<rect class="discordant" x="{_f(LEFT + label_w)}" y="{_f(yy)}" '
            f'width="{_f(bar)}" height="16" fill="{color}"/>'
        )
        parts.append(_text(LEFT + label_w + bar + 6, yy + 13, str(count)))
    bottom = top + 2 * 24 + 14
    parts.append(_text(LEFT, bottom, footer, size=11, fill="#444"))
    counts_w = label_w + bar_max + 6 + _text_width(str(most), 12)
    width = max(
        _text_width(title, 13),
        counts_w,
        _text_width(footer, 11),
        *(_text_width(line, 12) for line in lines),
    )
    return parts, width, bottom + 16


def render_chart(
    runs: Sequence[Mapping[str, Any]], comparison: Mapping[str, Any] | None = None
) -> str:
    """The SVG chart of run summaries (priors after the models) and an optional comparison."""
    ordered = check_inputs(runs, comparison)
    n_priors = sum(1 for s in ordered if s.get("prior"))
    if n_priors > len(PRIOR_GREYS):
        raise ValueError(f"at most {len(PRIOR_GREYS)} priors can be drawn, not {n_priors}")
    names = [run_label(s, i) for i, s in enumerate(ordered)]
    fills = [_fill(i, False) for i in range(len(ordered) - n_priors)]
    fills += [_fill(i, True) for i in range(n_priors)]
    conf = f"{ordered[0]['bootstrap']['confidence']:.0%}"
    title = f"Execution accuracy by tier ({conf} bootstrap intervals over questions)"
    legend_y = TOP + PLOT_HEIGHT + 52
    panel_y = legend_y + 18 * len(ordered) + 30
    text_w = max(_text_width(title, 14), *(_text_width(n, 12) for n in names))
    panel: list[str] = []
    height = panel_y - 12
    if comparison is not None:
        panel, panel_w, height = _panel(comparison, panel_y)
        text_w = max(text_w, panel_w)
    groups = _groups(ordered)
    slots = _slots(groups, len(ordered), text_w)
    plot_w = max(sum(slots), text_w)
    width = float(round(LEFT + plot_w + RIGHT))
    patterns = "".join(
        f'<pattern id="prior{i}" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#f4f4f4"/>'
        f'<rect width="3" height="6" fill="{grey}"/></pattern>'
        for i, grey in enumerate(PRIOR_GREYS[:n_priors])
    )
    body = [
        f'<rect width="{_f(width)}" height="{_f(height)}" fill="#ffffff"/>',
        _text(LEFT, 26, title, size=14, weight="bold"),
        *_axis(LEFT + plot_w, TOP),
        *_bars(groups, fills, slots, TOP),
        *_legend(names, fills, legend_y),
        *panel,
    ]
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" font-family={quoteattr(FONT)}>'
    )
    return "\n".join([head, f"<defs>{patterns}</defs>", *body, "</svg>"]) + "\n"
