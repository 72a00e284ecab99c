"""Opening a Spark Connect session quietly (pyspark warns about pandas 3 on import).

>>> parse_url("sc://localhost:15002")
('localhost', 15002)
>>> is_spark_url("sc://db.example.org:443/;token=x"), is_spark_url("data/omop.duckdb")
(True, False)
"""

from __future__ import annotations

import logging
import re
import warnings

_URL = re.compile(r"^sc://([^:/;]+)(?::(\d+))?(?:/.*)?$")


def is_spark_url(db: object) -> bool:
    return isinstance(db, str) and db.startswith("sc://")


def parse_url(url: str) -> tuple[str, int]:
    found = _URL.match(url)
    if found is None:
        raise ValueError(f"{url!r} is not a Spark Connect URL like sc://host:15002")
    return found.group(1), int(found.group(2) or 15002)


def check_reachable(url: str, timeout: float = 10.0) -> None:
    """Raise ConnectionError unless something listens at ``url``'s host and port (the
    Connect client itself retries an unreachable server for minutes)."""
    import socket

    host, port = parse_url(url)
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as e:
        raise ConnectionError(f"no server at {host}:{port} ({e.strerror or e})") from None


def new_session(url: str):
    """A new Spark Connect session (its own temp views and configuration) at ``url``."""
    check_reachable(url)
    # pyspark logs every failed query with its JVM stack trace; a failed query is an
    # outcome here, reported as one line.
    for name in ("SQLQueryContextLogger", "pyspark", "py4j"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pyspark.sql import SparkSession

        return SparkSession.builder.remote(url).create()
