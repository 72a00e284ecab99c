"""The fingerprint of the database actually opened: checked, never taken on trust.

``sqlgold db build`` stores the fingerprint it computed in ``sqlgold.build_info``, but a
file can be changed afterwards (rows deleted from a copy, a table reloaded), and a stored
value would then vouch for data the file no longer holds.  So the fingerprint is always
the one computed from the data (:mod:`score.cdm.fingerprint`); computing it costs a pass over
every row, so it is kept in a small cache *outside* the database file, keyed by the
file's resolved path, size, modification time (ns), inode and device, and those of its
write-ahead log (``<file>.wal``, which DuckDB replays on open).  Any change to the file
changes that key and the fingerprint is computed again.  The stored value is then a
cross-check: :attr:`FingerprintCheck.stored_differs` says the file changed after it was
built.

A cache entry is a JSON file ``<cache>/<sha256 of the path>.json``; an unreadable or
damaged entry is ignored, a cache folder that cannot be written is no error (the
fingerprint is then computed on every open).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from score.cdm.fingerprint import FINGERPRINT_FORMAT, compute_fingerprint
from score.defaults import DEFAULT_FINGERPRINT_CACHE
from score.files import write_atomic

#: The build_info key holding the fingerprint's format (absent in builds before format 2).
FORMAT_KEY = "fingerprint_format"
CACHE_FORMAT = "sqlgold.fingerprint-cache/1"


@dataclass(frozen=True)
class FingerprintCheck:
    """The fingerprint of the data in the file, and what ``db build`` stored for it."""

    fingerprint: str
    how: str  # "computed" now, or "cached" (computed earlier for this very file state)
    stored: str | None = None  # build_info's fingerprint, when of the same format
    stored_format: str | None = None  # build_info's fingerprint format (None: none stored)

    @property
    def stored_differs(self) -> bool:
        """True when ``db build`` stored another fingerprint of the same definition: the
        file was changed after it was built."""
        return self.stored is not None and self.stored != self.fingerprint

    def describe(self) -> str:
        """One line for people, e.g. ``computed; matches the one db build stored``."""
        text = self.how
        if self.stored_format is None:
            return text
        if self.stored is None:
            return f"{text}; db build stored one of an older definition (rebuild with `make db`)"
        if self.stored_differs:
            return (
                f"{text}; DIFFERS from the one db build stored ({self.stored}): "
                "the file was changed after it was built"
            )
        return f"{text}; matches the one db build stored"


def file_state(path: str | Path) -> dict[str, Any]:
    """What identifies a database file's current state: resolved path, size, mtime (ns),
    inode and device, and the same of its write-ahead log (or None)."""
    resolved = Path(path).resolve()
    state: dict[str, Any] = {"path": str(resolved)}
    for key, target in (("file", resolved), ("wal", Path(f"{resolved}.wal"))):
        try:
            st = os.stat(target)
        except FileNotFoundError:
            state[key] = None
            continue
        state[key] = [st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]
    return state


class FingerprintCache:
    """Fingerprints computed earlier, each valid only for the exact file state it was
    computed on."""

    def __init__(self, directory: str | Path | None = DEFAULT_FINGERPRINT_CACHE) -> None:
        self.directory = Path(directory) if directory is not None else None

    def _entry(self, state: Mapping[str, Any]) -> Path | None:
        if self.directory is None:
            return None
        name = hashlib.sha256(state["path"].encode("utf-8", "surrogatepass")).hexdigest()
        return self.directory / f"{name[:32]}.json"

    def lookup(self, state: Mapping[str, Any], schema: str) -> str | None:
        entry = self._entry(state)
        if entry is None:
            return None
        try:
            found = json.loads(entry.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(found, dict):
            return None
        key = {"format": CACHE_FORMAT, "fingerprint_format": FINGERPRINT_FORMAT, "schema": schema}
        if any(found.get(k) != v for k, v in key.items()) or found.get("state") != dict(state):
            return None
        fingerprint = found.get("fingerprint")
        return fingerprint if isinstance(fingerprint, str) and len(fingerprint) == 64 else None

    def store(self, state: Mapping[str, Any], schema: str, fingerprint: str) -> None:
        entry = self._entry(state)
        if entry is None:
            return
        payload = {
            "format": CACHE_FORMAT,
            "fingerprint_format": FINGERPRINT_FORMAT,
            "schema": schema,
            "state": dict(state),
            "fingerprint": fingerprint,
        }
        # a cache that cannot be written only costs a recomputation
        with contextlib.suppress(OSError):
            entry.parent.mkdir(parents=True, exist_ok=True)
            self._forget_gone_files()
            write_atomic(entry, json.dumps(payload, sort_keys=True))

    def _forget_gone_files(self) -> None:
        """Drop the entries of database files that no longer exist (temporary copies),
        so the cache does not grow without bound; it runs only when a fingerprint was
        computed, which is rare next to the pass over the data it follows."""
        assert self.directory is not None
        for entry in self.directory.glob("*.json"):
            try:
                state = json.loads(entry.read_text(encoding="utf-8"))["state"]
                if state.get("server"):
                    continue  # a server CDM's entry (score.cdm.server_fingerprint)
                if not Path(state["path"]).exists():
                    entry.unlink()
            except (OSError, ValueError, KeyError, TypeError):
                continue


def checked_fingerprint(
    con: Any,
    catalog: str,
    schema: str,
    path: str | Path,
    build_info: Mapping[str, str],
    *,
    cache: FingerprintCache | None = None,
    recompute: bool = False,
) -> FingerprintCheck:
    """The fingerprint of ``catalog.schema`` (the file at ``path``): from the cache when
    the file is unchanged since it was computed (and ``recompute`` is false), else computed
    now; with what ``db build`` stored in ``build_info`` as a cross-check."""
    cache = cache if cache is not None else FingerprintCache()
    before = file_state(path)
    fingerprint = None if recompute else cache.lookup(before, schema)
    how = "cached"
    if fingerprint is None:
        fingerprint, _ = compute_fingerprint(con, catalog, schema)
        how = "computed"
        if file_state(path) == before:  # unchanged while it was read
            cache.store(before, schema, fingerprint)
    stored, stored_format = None, None
    if build_info.get("fingerprint") and build_info.get("schema") == schema:
        stored_format = build_info.get(FORMAT_KEY, "sqlgold.fingerprint/1")
        if stored_format == FINGERPRINT_FORMAT:
            stored = build_info["fingerprint"]
    return FingerprintCheck(fingerprint, how, stored, stored_format)
