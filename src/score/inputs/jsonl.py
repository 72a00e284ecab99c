"""Reading JSONL line by line, keeping each line's number for error messages.

Lines are split on ``\\n`` only: a raw carriage return (or any other character Python
would treat as a line break) inside a record leaves it one line, so line numbers are
the ones an editor shows.  Every way a line can be wrong is a message for that line,
never an exception: bytes that are not UTF-8, text that is not JSON, nesting deeper
than the decoder follows, integers longer than Python converts, and strings holding
a lone surrogate (which no UTF-8 file can be written with).

>>> for found in numbered_json(['{"a": 1}', "", "{oops", "[1]"]):
...     print(found)
(1, {'a': 1}, None)
(3, None, 'not JSON: Expecting property name enclosed in double quotes (column 2)')
(4, [1], None)
>>> list(numbered_json([b'{"a": "\\xff"}']))
[(1, None, 'not UTF-8 text (byte 0xff at column 8)')]
>>> list(numbered_json(['"\\\\ud800"']))
[(1, None, 'a string holds a lone surrogate (\\\\ud800), which is not Unicode text')]
"""

from __future__ import annotations

import io  # noqa: F401 - the doctests' files
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from score import defaults
from score.errors import InputError


def read_lines(
    f: IO[bytes],
    *,
    path: str | Path | None = None,
    stage: str = "input",
    limit: int | None = None,
    keep_ends: bool = False,
) -> Iterator[bytes]:
    """The lines of a binary file, split on ``\\n`` only (the ``\\n`` removed), each at
    most ``limit`` bytes (:data:`score.defaults.MAX_LINE_BYTES` unless given): a longer
    line raises :class:`InputError` naming ``path``, the line, the bound and ``stage``
    after at most ``limit + 1`` bytes of it were read.  With ``keep_ends`` each line
    keeps its ``\\n`` (a last line without one is then told apart).

    >>> list(read_lines(io.BytesIO(b"ab\\ncd")))
    [b'ab', b'cd']
    >>> list(read_lines(io.BytesIO(b"ok\\ntoo long\\n"), path="p.jsonl", limit=4))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    score.inputs.jsonl.LineTooLong: [input] p.jsonl:2: line 2 is longer than 4 bytes, the bound ...
    """
    bound = defaults.MAX_LINE_BYTES if limit is None else limit
    for number, raw in enumerate(iter(lambda: f.readline(bound + 1), b""), start=1):
        line = raw[:-1] if raw.endswith(b"\n") else raw
        if len(line) > bound:
            raise line_too_long(path, number, bound, stage)
        yield raw if keep_ends else line


def read_text(path: str | Path, *, stage: str = "input", limit: int | None = None) -> str:
    """A whole UTF-8 text file (for formats parsed whole: a QueryLibrary page, a JSON
    array), read line by line under the same bound as :func:`read_lines`; OSError and
    UnicodeDecodeError as ``Path.read_text`` raises them."""
    bound = defaults.MAX_LINE_BYTES if limit is None else limit
    parts: list[bytes] = []
    with Path(path).open("rb") as f:
        for number, raw in enumerate(iter(lambda: f.readline(bound + 1), b""), start=1):
            if len(raw) - raw.endswith(b"\n") > bound:
                raise line_too_long(path, number, bound, stage)
            parts.append(raw)
    return b"".join(parts).decode("utf-8")


class LineTooLong(InputError):
    """A line over the bound: the file is refused, not one of its records (a reader that
    reports bad records and goes on stops here)."""


def line_too_long(path: str | Path | None, number: int, bound: int, stage: str) -> LineTooLong:
    size = f"{bound // 2**20} MiB ({bound} bytes)" if bound % 2**20 == 0 else f"{bound} bytes"
    return LineTooLong(
        f"line {number} is longer than {size}, the bound on one line of an input file "
        f"(MAX_LINE_BYTES in score/defaults.py); nothing past its first {bound + 1} bytes "
        "was read",
        stage=stage,
        path=None if path is None else str(path),
        line=number,
    )


def numbered_json(lines: Iterable[str | bytes]) -> Iterator[tuple[int, Any, str | None]]:
    """``(line number, value, None)`` for each line that decodes, ``(line number, None,
    message)`` for one that does not; blank lines are skipped."""
    for number, raw in enumerate(lines, start=1):
        if isinstance(raw, bytes):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                byte = f"0x{raw[e.start]:02x}"
                yield number, None, f"not UTF-8 text (byte {byte} at column {e.start + 1})"
                continue
        else:
            text = raw
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as e:
            yield number, None, f"not JSON: {e.msg} (column {e.colno})"
            continue
        except RecursionError:
            yield number, None, "not readable: JSON nested too deeply"
            continue
        except ValueError as e:  # e.g. an integer with more digits than Python converts
            yield number, None, f"not readable: {str(e).splitlines()[0]}"
            continue
        surrogate = _lone_surrogate(text, value)
        if surrogate is not None:
            message = f"a string holds a lone surrogate (\\u{surrogate:04x})"
            yield number, None, message + ", which is not Unicode text"
            continue
        yield number, value, None


def numbered_json_file(
    path: str | Path, *, stage: str = "input"
) -> Iterator[tuple[int, Any, str | None]]:
    """:func:`numbered_json` over a file's lines; a file that cannot be opened raises
    :class:`InputError` naming it and ``stage``."""
    try:
        f = Path(path).open("rb")
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", stage=stage, path=str(path)) from None
    with f:
        yield from numbered_json(read_lines(f, path=path, stage=stage))


def _lone_surrogate(text: str, value: Any) -> int | None:
    """The first lone surrogate code point in a decoded line, if any.  Only a ``\\u``
    escape can put one there (UTF-8 text cannot carry one), so only lines with an
    escape are checked."""
    if "\\u" not in text:
        return None
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as e:
        return ord(e.object[e.start])
    except (ValueError, RecursionError):
        return None
    return None
