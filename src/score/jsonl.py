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
from pathlib import Path
from typing import Any

from .errors import InputError


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


def decoded_lines(
    path: str | Path, *, stage: str = "input"
) -> Iterator[tuple[int, str | None, str | None]]:
    """``(line number, text, None)`` for each line of a file, or ``(line number, None,
    message)`` for a line that is not UTF-8, so one bad byte costs one line, not the file.

    A file that cannot be opened raises :class:`InputError` naming it.
    """
    try:
        handle = Path(path).open("rb")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", stage=stage, path=str(path)) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            try:
                yield number, raw.decode("utf-8"), None
            except UnicodeDecodeError as e:
                byte = f"0x{raw[e.start]:02x}"
                yield number, None, f"not UTF-8 text (byte {byte} at column {e.start + 1})"


def numbered_json_file(
    path: str | Path, *, stage: str = "input"
) -> Iterator[tuple[int, Any, str | None]]:
    """:func:`numbered_json` over a file's lines, a line that is not UTF-8 being an error
    of its own (``(line number, None, message)``) instead of a crash.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("wb", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(b'{"a": 1}\\n{"b": "\\xff"}\\n')
    >>> list(numbered_json_file(f.name))
    [(1, {'a': 1}, None), (2, None, 'not UTF-8 text (byte 0xff at column 8)')]
    >>> os.unlink(f.name)
    """
    for number, text, error in decoded_lines(path, stage=stage):
        if error is not None:
            yield number, None, error
            continue
        for _, value, problem in numbered_json([text]):
            yield number, value, problem
