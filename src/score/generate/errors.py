"""Errors of the generation stage (one branch of sqlgold's error tree)."""

from __future__ import annotations

from score.errors import SqlgoldError


class GenerationError(SqlgoldError):
    """Generation cannot go on: a bad input, an unusable endpoint, a leak in retrieval."""

    stage = "generate"


class MissingExtraError(GenerationError):
    """The optional packages of ``sqlgold[generate]`` are not installed."""


EXTRA_HINT = "pip install 'sqlgold[generate]' (or: make generate)"


def require(module: str):
    """Import an optional dependency, or raise a one-line error saying how to install it.

    >>> require("json").__name__
    'json'
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtraError(
            f"the {module!r} package is not installed; install the generation extra: {EXTRA_HINT}"
        ) from None
