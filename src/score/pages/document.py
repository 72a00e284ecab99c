"""A review page assembled from its templates: one HTML file that needs nothing else.

The page is ``assets/page.html`` with the summary (plain HTML, readable with scripts
off), the style sheet, the script and the data filled in.  The data is JSON in a
``<script type="application/json">`` block, written with sorted keys and with every
``<``, ``>`` and ``&`` as a ``\\u`` escape, so no text in it (a hostile SQL string
included) can end the block.  The page's Content-Security-Policy forbids any request.
Same input, same bytes: nothing here reads a clock.

>>> json_block({"sql": "</script><img src=x onerror=alert(1)>"})
'{"sql":"\\\\u003c/script\\\\u003e\\\\u003cimg src=x onerror=alert(1)\\\\u003e"}'
"""

from __future__ import annotations

import html
import json
import re
from functools import cache
from importlib.resources import files
from typing import Any

PAGE_FILE = "report.html"
_HOLE = re.compile(r"@@([A-Z_]+)@@")


@cache
def asset(name: str) -> str:
    """A template shipped in ``score/pages/assets/``."""
    return (files("score.pages") / "assets" / name).read_text(encoding="utf-8")


#: Characters that change how text around them is shown without being seen: bidi
#: overrides and isolates, zero-width characters, controls (a tab, a line feed and a
#: carriage return excepted).  The page shows each as a visible mark, ``⟨U+202E⟩``, so a
#: prediction, a cell or a question reads as what ran or was asked (page.js does the same
#: for what its script shows).
HIDDEN = re.compile(
    "[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\ufff9-\ufffb]"
)


def visible(text: str) -> str:
    """``text`` with every hidden character (:data:`HIDDEN`) shown as its code point.

    >>> visible("abc\u202eSELECT 1")
    'abc⟨U+202E⟩SELECT 1'
    """
    return HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def escape(text: str) -> str:
    """``text`` as HTML text: markup escaped, hidden characters shown."""
    return html.escape(visible(text), quote=True)


def json_block(value: Any) -> str:
    """``value`` as JSON text safe inside a ``<script>`` element."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return text


def render_page(
    title: str, summary_html: str, data: dict[str, Any], table_title: str = "Records"
) -> str:
    """The whole page: ``summary_html`` is trusted markup (built with :mod:`parts`),
    ``title`` and ``table_title`` are text, ``data`` is what the script shows."""
    holes = {
        "TITLE": escape(title),
        "TABLE_TITLE": escape(table_title),
        "CSS": asset("page.css"),
        "JS": asset("page.js"),
        "SUMMARY": summary_html,
        "DATA": json_block(data),
    }
    return _HOLE.sub(lambda m: holes[m.group(1)], asset("page.html"))
