"""Default locations, in a module that imports nothing but platformdirs, so every CLI can
name them."""

from __future__ import annotations

from pathlib import Path

#: The grounding documents ``sqlgold grounding`` writes and ``generate --mode rag`` reads,
#: in the current folder (this project's are data/grounding, which its Makefile names).
DEFAULT_GROUNDING = Path("grounding")

#: This project's own source records, read by ``verify --id`` when no ``--source`` is given
#: and the current folder is the project's checkout (``make curate`` curates them).
DEFAULT_SOURCE = Path("data/benchmark/omop_source.jsonl")


def cache_root() -> Path:
    """The user's cache folder for sqlgold, by the platform's convention
    (``$XDG_CACHE_HOME/sqlgold``, by default ``~/.cache/sqlgold`` on Linux): what sqlgold
    can compute again and keeps to save the time, wherever a command runs."""
    import platformdirs

    return Path(platformdirs.user_cache_dir("sqlgold", appauthor=False))


#: The embedded OMOP database (Synthea 1k): every command reads it unless told another,
#: and builds it there the first time (:func:`score.cdm.embedded.ensure_embedded`).
DEFAULT_DB = cache_root() / "omop" / "synthea1k.duckdb"

#: How ``--help`` shows a default in the user cache folder: the same words on every
#: machine (``sqlgold config`` prints the folder).
SHOWN_EMBEDDED_DB = "the embedded database, in the user cache folder"
SHOWN_GOLD_CACHE = "gold/ in the user cache folder"

#: Gold results computed once (by curation, or a first scoring) and kept for rescoring.
DEFAULT_CACHE = cache_root() / "gold"

#: Fingerprints computed earlier, each valid for one exact state of a database file.
DEFAULT_FINGERPRINT_CACHE = cache_root() / "fingerprints"

#: Test suites' variant databases, kept by the suite's sha256.
DEFAULT_SUITE_CACHE = cache_root() / "suites"

#: The longest line sqlgold reads from a user's file (predictions, CSV indexes, task
#: files, source files), in bytes.  A longer line stops the read with an error naming the
#: file, the line and this bound, after reading at most this much of it: memory stays
#: bounded whatever the file holds (one 4 GB line of NUL bytes took 6 GB to reject).
#: A model's answer, a task or a QueryLibrary page is far below it.
MAX_LINE_BYTES = 16 * 2**20
