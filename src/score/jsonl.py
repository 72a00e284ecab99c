"""Reading JSONL line by line, keeping each line's number for error messages.

>>> for found in numbered_json(['{"a": 1}', "", "{oops", "[1]"]):
...     print(found)
(1, {'a': 1}, None)
(3, None, 'not JSON: Expecting property name enclosed in double quotes (column 2)')
(4, [1], None)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any


def numbered_json(lines: Iterable[str]) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, value, None)`` for each line that decodes, ``(line number, None,
    message)`` for one that does not; blank lines are skipped."""
    for number, text in enumerate(lines, start=1):
        if not text.strip():
            continue
        try:
            yield number, json.loads(text), None
        except json.JSONDecodeError as e:
            yield number, None, f"not JSON: {e.msg} (column {e.colno})"
