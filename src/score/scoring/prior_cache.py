"""The priors' summaries kept on disk, so a scoring that changes only its predictions
does not score the two priors again.

Seed 004's priors are input-blind (:mod:`score.scoring.priors`): what they score depends
on the tasks scored, the database, the comparator profile, the executor's settings, the
suite and the bootstrap, never on the predictions.  A scoring of one prediction on a task
set of 451 instances spent most of its time on them (every instance answered twice through
the pipeline, two bootstrapped summaries).  Their summaries are kept in the gold cache's
folder (``priors/<key>.json``) under a key that hashes everything they depend on,
versions included; a change to any of it is another key.  ``--no-cache`` keeps nothing.

>>> key = prior_key({"profile": "sqlgold", "fingerprint": "f" * 64})
>>> key == prior_key({"fingerprint": "f" * 64, "profile": "sqlgold"}), len(key)
(True, 64)
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from score.files import write_atomic

PRIOR_CACHE_FORMAT = "sqlgold.prior-cache/1"
PRIOR_FOLDER = "priors"


def prior_key(parts: dict[str, Any]) -> str:
    """The cache key of the priors scored under ``parts`` (any JSON values; key order
    does not matter)."""
    text = json.dumps({"format": PRIOR_CACHE_FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class PriorCache:
    """Prior summaries under ``directory`` (None: nothing is kept)."""

    def __init__(self, directory: str | Path | None) -> None:
        self.folder = None if directory is None else Path(directory) / PRIOR_FOLDER

    def get(self, key: str) -> list[dict[str, Any]] | None:
        """The summaries kept under ``key``, or None (none kept, or a file that cannot be
        read as one: it is scored again and replaced)."""
        if self.folder is None:
            return None
        path = self.folder / f"{key}.json"
        try:
            kept = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(kept, dict) or kept.get("format") != PRIOR_CACHE_FORMAT:
            return None
        summaries = kept.get("summaries")
        if not isinstance(summaries, list) or not all(isinstance(s, dict) for s in summaries):
            return None
        return summaries

    def put(self, key: str, summaries: list[dict[str, Any]]) -> None:
        if self.folder is None:
            return
        data = {"format": PRIOR_CACHE_FORMAT, "summaries": summaries}
        write_atomic(self.folder / f"{key}.json", json.dumps(data, sort_keys=True) + "\n")
