"""Importer for the project's own source format: JSONL of ``sqlgold.source/1`` records.

The records are taken as written (their ``origin``, if any, is kept); every malformed
line, schema violation and repeated id comes back as a problem with its line number.
"""

from __future__ import annotations

import os

from curate.sources.records import SourceProblem, SourceRecord, read_sources

#: Files of this format in a folder.
PATTERN = "*.jsonl"


def load_file(
    path: str | os.PathLike[str], *, name: str | None = None
) -> tuple[list[SourceRecord], list[SourceProblem]]:
    """Records and problems of one source JSONL file (``name`` is unused: origins are kept)."""
    return read_sources(path)
