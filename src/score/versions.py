"""The installed versions a scoring run, a curated task file and a generation record.

Read from each package's metadata, not from the package itself: importing DuckDB to read
``duckdb.__version__`` cost a run on PostgreSQL 40 ms of its start for a module it never
uses in that process.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version

#: What decides a verdict besides the inputs: sqlgold, and the engine and parser under it.
CORE = ("sqlgold", "duckdb", "sqlglot")


def installed_versions(packages: Iterable[str] = CORE) -> dict[str, str | None]:
    """Each package's installed version (None for one that is not installed).

    >>> sorted(installed_versions())
    ['duckdb', 'sqlglot', 'sqlgold']
    >>> installed_versions(["no-such-package-here"])
    {'no-such-package-here': None}
    """
    found: dict[str, str | None] = {}
    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = None
    return found
