"""The ``sqlgold`` command line: :func:`main` (the click group) and :func:`run` (the
installed script), defined in :mod:`curate.cli.commands`.

They are loaded when first asked for, so a stage's own command module (``curate/<stage>/
cli.py``) may import this package's option bundles (:mod:`curate.cli.options`) without
importing every command, which imports it in turn.
"""

from __future__ import annotations

from typing import Any

__all__ = ["main", "run"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from curate.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module 'curate.cli' has no attribute {name!r}")
