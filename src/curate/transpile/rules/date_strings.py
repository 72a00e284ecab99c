"""Read date strings the way SQL Server does, so they can be written as ISO literals.

SQL Server (language us_english, ``DATEFORMAT mdy``, two-digit year cutoff 2049) turns
many spellings into a date: ``'20110101'``, ``'1/2/2011'``, ``'01-jan-2011'``,
``'Jan 2, 2011 10:30PM'``.  DuckDB reads only ISO ``YYYY-MM-DD[ HH:MM:SS[.ffffff]]``.
PostgreSQL's default ``DateStyle`` (ISO, MDY) reads the same spellings the same way.

>>> read_datetime("01-jan-2011")
datetime.datetime(2011, 1, 1, 0, 0)
>>> read_datetime("1/2/11 10:30PM")
datetime.datetime(2011, 1, 2, 22, 30)
>>> read_datetime("not a date") is None
True
>>> iso_text(read_datetime("20110102"), with_time=False)
'2011-01-02'
"""

from __future__ import annotations

import datetime as dt
import re

MONTHS = (
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
)  # fmt: skip

_TIME = re.compile(
    r"^(?P<h>\d{1,2})(?::(?P<mi>\d{1,2})(?::(?P<s>\d{1,2})(?:[.:](?P<f>\d{1,7}))?)?)?"
    r"\s*(?P<ampm>[AaPp][Mm])?$"
)
_SPLIT = re.compile(r"^(?P<date>.*?)(?:(?:\s+|T)(?P<time>\d{1,2}(?::\d.*|\s*[AaPp][Mm])))?$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?)?$")


def is_iso(text: str) -> bool:
    """Whether DuckDB reads ``text`` as a date or timestamp unchanged.

    >>> is_iso("2011-01-02"), is_iso("2011-01-02 10:00:00"), is_iso("20110102")
    (True, True, False)
    """
    return bool(_ISO.match(text.strip()))


def read_datetime(text: str) -> dt.datetime | None:
    """The date and time SQL Server reads from ``text``, or None if it is not one."""
    match = _SPLIT.match(text.strip())
    if not match:
        return None
    day = _read_date(match["date"].strip())
    moment = _read_time(match["time"]) if match["time"] else dt.time()
    if day is None or moment is None:
        return None
    return dt.datetime.combine(day, moment)


def has_time(text: str) -> bool:
    """Whether ``text`` spells a time of day as well as a date.

    >>> has_time("2011-01-02"), has_time("01/02/2011 10:00")
    (False, True)
    """
    match = _SPLIT.match(text.strip())
    return bool(match and match["time"])


def iso_text(value: dt.datetime, with_time: bool) -> str:
    """``value`` as DuckDB's ISO text, with or without the time of day.

    >>> iso_text(dt.datetime(2011, 1, 2, 3, 4, 5, 60000), with_time=True)
    '2011-01-02 03:04:05.06'
    """
    if not with_time:
        return value.date().isoformat()
    text = value.isoformat(sep=" ")
    return text.rstrip("0") if value.microsecond else text


def _year(token: str) -> int:
    year = int(token)
    if len(token) <= 2:
        year += 2000 if year < 50 else 1900
    return year


def _month(token: str) -> int | None:
    word = token.lower()
    if len(word) < 3:
        return None
    for number, name in enumerate(MONTHS, start=1):
        if name.startswith(word):
            return number
    return None


def _date(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def _read_date(text: str) -> dt.date | None:
    if re.fullmatch(r"\d{8}", text):
        return _date(int(text[:4]), int(text[4:6]), int(text[6:]))
    if re.fullmatch(r"\d{6}", text):
        return _date(_year(text[:2]), int(text[2:4]), int(text[4:]))
    parts = [p for p in re.split(r"[\s,/.\-]+", text) if p]
    if len(parts) not in (2, 3):
        return None
    words = [p for p in parts if p.isalpha()]
    if not words:
        return _read_numeric_date(parts)
    if len(words) != 1 or _month(words[0]) is None:
        return None
    return _read_alphabetic_date(parts, _month(words[0]))


def _read_numeric_date(parts: list[str]) -> dt.date | None:
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    if len(parts[0]) == 4:  # yyyy/mm/dd
        return _date(int(parts[0]), int(parts[1]), int(parts[2]))
    if len(parts[2]) not in (2, 4):
        return None
    return _date(_year(parts[2]), int(parts[0]), int(parts[1]))  # mdy


def _read_alphabetic_date(parts: list[str], month: int) -> dt.date | None:
    numbers = [p for p in parts if p.isdigit()]
    if len(numbers) != len(parts) - 1:
        return None
    years = [n for n in numbers if len(n) == 4]
    if len(numbers) == 1:  # "Jan 2011": the first of the month
        return _date(int(numbers[0]), month, 1) if years else None
    if years:
        day = next(n for n in numbers if n is not years[0])
        return _date(int(years[0]), month, int(day))
    return _date(_year(numbers[1]), month, int(numbers[0]))  # day first, then year


def _read_time(text: str) -> dt.time | None:
    match = _TIME.match(text.strip())
    if not match:
        return None
    hour, minute = int(match["h"]), int(match["mi"] or 0)
    second = int(match["s"] or 0)
    micro = int((match["f"] or "0").ljust(6, "0")[:6])
    if match["ampm"]:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if match["ampm"].lower() == "pm" else 0)
    try:
        return dt.time(hour, minute, second, micro)
    except ValueError:
        return None
