"""A typed cell value as the short text documents show for it.

Two documents show example values from the database: the prompt's schema text
(:mod:`score.generate.schema_text`) and the grounding documents (``curate.grounding``).
They show typed values the same way, here; each then treats free text its own way (one
cuts it for a one-line comment, the other escapes it for a Markdown table).

>>> import datetime as dt, decimal
>>> [typed_text(v) for v in (None, True, 2.5, decimal.Decimal("1.50"), dt.date(2020, 1, 2))]
['NULL', 'true', '2.5', '1.50', '2020-01-02']
>>> typed_text(dt.datetime(2020, 1, 2, 3, 4)), typed_text("text") is None
('2020-01-02 03:04:00', True)
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any


def typed_text(value: Any) -> str | None:
    """The text of NULL, a boolean, a number or a date/time; ``None`` for anything else
    (text, intervals, nested values), which the caller shows its own way."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return None
