"""What a suite build is asked to do (``sqlgold suite build``'s options), written into
the suite's manifest (:meth:`BuildSettings.as_dict`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class BuildSettings:
    seed: int = 0
    max_databases: int = 50
    max_candidates: int = 3000
    jobs: int = 1
    profile: str = "sqlgold"
    patience: int = 24
    #: candidates (each killing something) side by side in one variant
    blocks_per_variant: int = 24

    def as_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "max_databases": self.max_databases,
            "max_candidates": self.max_candidates,
            "profile": self.profile,
            "patience": self.patience,
            "blocks_per_variant": self.blocks_per_variant,
        }
