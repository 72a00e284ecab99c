"""A server CDM's fingerprint is recomputed only when a change marker moved."""

from __future__ import annotations

from score.cdm.fingerprint_check import FingerprintCache
from score.cdm.server_fingerprint import BY_MARKERS, FULL_PASS, checked_server_fingerprint


class Server:
    """Markers and a full pass, counted."""

    def __init__(self) -> None:
        self.markers = {"person": [16384, 1130, 0, 0, "person_id bigint"]}
        self.passes = 0
        self.write_during_pass = False

    def read_markers(self) -> dict:
        return {k: list(v) for k, v in self.markers.items()}

    def full_pass(self) -> str:
        self.passes += 1
        if self.write_during_pass:
            self.markers["person"][1] += 1
        return f"{self.markers['person'][1]:064x}"


def check(server: Server, cache: FingerprintCache, **kw):
    return checked_server_fingerprint(
        "postgresql://reader:***@db/omop", "cdm", server.read_markers, server.full_pass,
        cache=cache, **kw,
    )  # fmt: skip


def test_unchanged_markers_vouch_for_the_fingerprint_of_the_last_full_pass(tmp_path):
    server, cache = Server(), FingerprintCache(tmp_path)
    first = check(server, cache)
    assert (first.how, server.passes) == (FULL_PASS, 1)
    again = check(server, cache)
    assert (again.fingerprint, again.how, server.passes) == (first.fingerprint, BY_MARKERS, 1)
    assert check(server, cache, recompute=True).how == FULL_PASS and server.passes == 2


def test_a_moved_marker_makes_the_full_pass_again(tmp_path):
    server, cache = Server(), FingerprintCache(tmp_path)
    check(server, cache)
    server.markers["person"][3] += 5  # rows deleted
    moved = check(server, cache)
    assert moved.how == FULL_PASS and server.passes == 2
    assert check(server, cache).how == BY_MARKERS


def test_a_pass_during_which_the_markers_moved_is_not_cached(tmp_path):
    server, cache = Server(), FingerprintCache(tmp_path)
    server.write_during_pass = True
    assert check(server, cache).how == FULL_PASS
    server.write_during_pass = False
    assert check(server, cache).how == FULL_PASS and server.passes == 2


def test_schemas_of_one_server_and_database_files_keep_their_own_entries(tmp_path):
    server, cache = Server(), FingerprintCache(tmp_path)
    check(server, cache)
    other = checked_server_fingerprint(
        "postgresql://reader:***@db/omop", "omop", server.read_markers, server.full_pass,
        cache=cache,
    )  # fmt: skip
    assert other.how == FULL_PASS  # another schema: its own entry
    # a database file's entry being stored drops entries of files gone, never a server's
    cache.store({"path": str(tmp_path / "gone.duckdb"), "file": None, "wal": None}, "cdm", "0" * 64)
    assert check(server, cache).how == BY_MARKERS
