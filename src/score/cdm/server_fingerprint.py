"""The fingerprint of a CDM on a server, checked by change markers instead of a full pass.

Computing the fingerprint (:mod:`score.cdm.fingerprint`) reads every row of every CDM
table; on a server CDM of a billion rows that is hours, so it cannot be paid at every
scoring.  What a server keeps cheaply instead are *change markers*: on PostgreSQL each
table's storage file (``relfilenode``, new on TRUNCATE or a rewrite), its cumulative
insert, update and delete counters (``pg_stat_user_tables``) and its columns; on Spark
each table's files (new ones on every write) and its columns.  The fingerprint computed by
a full pass is cached beside the markers read before it (and found unchanged after it);
a later scoring reads the markers again, and only when one moved is the full pass made
again.  ``sqlgold db info --db URL --recompute`` makes it whatever the markers say.

What the markers cannot see: PostgreSQL publishes a session's counters when it goes idle
(at most about ten seconds after its last write), so a change made seconds before a
scoring may be seen only by the next; counters that are reset (``pg_stat_reset()``, a crash)
only ever cause a recomputation.

The cache is :class:`~score.cdm.fingerprint_check.FingerprintCache`, keyed by the server's
identity (its URL without the password, and the schema) instead of a file path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from score.cdm.fingerprint_check import FingerprintCache, FingerprintCheck

#: FingerprintCheck.how when the markers vouched for the cached fingerprint.
BY_MARKERS = "checked by change markers: unchanged since the full pass"
#: FingerprintCheck.how when the full pass was made now.
FULL_PASS = "computed by a full pass on the server"


def server_state(identity: str, schema: str, markers: Mapping[str, Any]) -> dict[str, Any]:
    """The cache key of a server CDM's current state: ``identity`` names the server (a
    URL without its password), ``schema`` the CDM's schema; ``markers`` are JSON values."""
    return {"path": f"{identity}#{schema}", "server": True, "markers": dict(markers)}


def checked_server_fingerprint(
    identity: str,
    schema: str,
    markers: Callable[[], Mapping[str, Any]],
    compute: Callable[[], str],
    *,
    cache: FingerprintCache | None = None,
    recompute: bool = False,
) -> FingerprintCheck:
    """The fingerprint of the CDM ``identity`` names: the cached one when its change
    markers are those it was computed under (and ``recompute`` is false), else ``compute()``
    now, cached when the markers did not move while it ran."""
    cache = cache if cache is not None else FingerprintCache()
    before = server_state(identity, schema, markers())
    found = None if recompute else cache.lookup(before, schema)
    if found is not None:
        return FingerprintCheck(found, BY_MARKERS)
    fingerprint = compute()
    if server_state(identity, schema, markers()) == before:  # nothing written while it was read
        cache.store(before, schema, fingerprint)
    return FingerprintCheck(fingerprint, FULL_PASS)
