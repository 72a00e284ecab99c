"""Default locations, in a module that imports nothing but platformdirs, so every CLI can
name them."""

from __future__ import annotations

from pathlib import Path

#: The embedded OMOP database ``sqlgold db build`` writes and every command reads.
DEFAULT_DB = Path("data/omop/synthea1k.duckdb")


#: The project's own source records (``make curate`` curates them; ``verify --id`` reads
#: its record there unless told another source).
DEFAULT_SOURCE = Path("data/benchmark/omop_source.jsonl")

#: The grounding documents ``sqlgold grounding`` writes.
DEFAULT_GROUNDING = Path("data/grounding")

#: Fingerprints computed earlier, each valid for one exact state of a database file.
DEFAULT_FINGERPRINT_CACHE = Path(".sqlgold-cache") / "fingerprints"


def cache_root() -> Path:
    """The user's cache folder for sqlgold, by the platform's convention
    (``$XDG_CACHE_HOME/sqlgold``, by default ``~/.cache/sqlgold`` on Linux): what sqlgold
    can compute again and keeps to save the time, wherever a command runs."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("sqlgold", appauthor=False))


#: Gold results computed once (by curation, or a first scoring) and kept for rescoring.
DEFAULT_CACHE = cache_root() / "gold"

#: The longest line sqlgold reads from a user's file (predictions, CSV indexes, task
#: files, source files), in bytes.  A longer line stops the read with an error naming the
#: file, the line and this bound, after reading at most this much of it: memory stays
#: bounded whatever the file holds (one 4 GB line of NUL bytes took 6 GB to reject).
#: A model's answer, a task or a QueryLibrary page is far below it.
MAX_LINE_BYTES = 16 * 2**20
