"""The publish stage's one error: a :class:`SqlgoldError` named for the stage."""

from __future__ import annotations

from typing import Any

from score.errors import SqlgoldError

STAGE = "publish"


def fail(message: str, **where: Any) -> SqlgoldError:
    return SqlgoldError(message, stage=STAGE, **where)
