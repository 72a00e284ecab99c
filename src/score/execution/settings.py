"""The limits and context every query runs under (:class:`ExecutorSettings`).

They are plain data, so they cross into the sandbox worker processes unchanged and are
recorded in a run's ``run.json``.  Sizes are written as DuckDB writes them:

>>> parse_size("4GB"), parse_size("500 MiB"), parse_size("100KB")
(4000000000, 524288000, 100000)
>>> ExecutorSettings(memory_limit="lots")
Traceback (most recent call last):
...
ValueError: memory_limit: 'lots' is not a size like 4GB, 500MB or 1GiB
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")

#: A result bigger than this never crosses from a worker to the scoring process, whatever
#: the memory limit (a quarter of the memory limit when that is smaller).
MAX_RESULT_BYTES = 256 * 2**20


def parse_size(text: str) -> int:
    """Bytes of a size like ``4GB`` (10^9, as DuckDB reads it) or ``1GiB`` (2^30)."""
    found = _SIZE.match(str(text))
    unit = found.group(2).lower() if found else None
    if found is None or unit not in _UNITS:
        raise ValueError(f"{text!r} is not a size like 4GB, 500MB or 1GiB")
    return int(float(found.group(1)) * _UNITS[unit])


@dataclass(frozen=True)
class ExecutorSettings:
    """Limits and context for every query an executor runs.

    ``timeout_seconds`` covers everything a query text goes through: extracting it from
    a model's answer, parsing, the guard and running it.  ``memory_limit`` bounds each
    query's process (DuckDB's buffers and, through the worker's address-space limit,
    everything else: list and string functions, the Arrow result).  ``max_sql_bytes``
    refuses longer SQL texts before they are parsed.
    """

    timeout_seconds: float = 30.0
    max_rows: int = 10_000
    memory_limit: str = "4GB"
    threads: int | None = None  # None: DuckDB's default (all cores)
    today: dt.date | None = None
    collation: str | None = None  # e.g. "nocase": DuckDB's default_collation for text
    max_sql_bytes: int = 100_000

    def __post_init__(self) -> None:
        if not self.timeout_seconds > 0:
            raise ValueError("timeout_seconds must be positive")
        if self.max_rows < 1:
            raise ValueError("max_rows must be at least 1")
        if self.max_sql_bytes < 1:
            raise ValueError("max_sql_bytes must be at least 1")
        if self.collation is not None and not self.collation.replace(".", "").isalnum():
            raise ValueError(f"not a collation name: {self.collation!r}")
        try:
            parse_size(self.memory_limit)
        except ValueError as e:
            raise ValueError(f"memory_limit: {e}") from None

    @property
    def memory_bytes(self) -> int:
        return parse_size(self.memory_limit)

    @property
    def max_result_bytes(self) -> int:
        """The largest Arrow result a query may return (bigger ones fail)."""
        return min(MAX_RESULT_BYTES, self.memory_bytes // 4)

    @property
    def kill_after_seconds(self) -> float:
        """When a query that did not stop at its timeout is killed with its process:
        the timeout plus half of it (at most 5 s more), so every query ends within
        twice its time limit."""
        return self.timeout_seconds + min(self.timeout_seconds * 0.5, 5.0)
