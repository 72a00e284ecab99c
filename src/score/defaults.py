"""Default locations, in a module that imports nothing, so every CLI can name them."""

from __future__ import annotations

from pathlib import Path

#: The embedded OMOP database ``sqlgold db build`` writes and every command reads.
DEFAULT_DB = Path("data/omop/synthea1k.duckdb")

#: Gold results computed once and kept for rescoring.
DEFAULT_CACHE = Path(".sqlgold-cache") / "gold"

#: The grounding documents ``sqlgold grounding`` writes.
DEFAULT_GROUNDING = Path("data/grounding")
