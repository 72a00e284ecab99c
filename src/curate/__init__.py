"""sqlgold's curation: source records in, a verified task file, its report and releases out.

The public API (documented in docs/reference/python-api.md; everything else is internal
and may change):

- :func:`curate_file`: curate a source file into a task file and its report;
- :func:`verify_pair`: check one gold and reference answer as curation checks them;
- :func:`publish_release`: publish a task file as a versioned Hugging Face Hub release;
- :class:`ReferenceRules`, :class:`SmellRules`, :class:`Curation`,
  :class:`PublishResult`: the rules a gold must meet, the smells looked for, what a
  curation wrote, and the release published.

The names are loaded when first used, so importing the package (as the command line
does) costs nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from curate.api import Curation, curate_file, publish_release, verify_pair
    from curate.publish.release import PublishResult
    from curate.verify.reference_rules import ReferenceRules
    from curate.verify.smells import SmellRules

__all__ = [
    "Curation",
    "PublishResult",
    "ReferenceRules",
    "SmellRules",
    "curate_file",
    "publish_release",
    "verify_pair",
]

#: The module each public name is defined in.
_HOME = {
    "PublishResult": "curate.publish.release",
    "ReferenceRules": "curate.verify.reference_rules",
    "SmellRules": "curate.verify.smells",
}


def __getattr__(name: str) -> Any:
    if name in __all__:
        import importlib

        return getattr(importlib.import_module(_HOME.get(name, "curate.api")), name)
    raise AttributeError(f"module 'curate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
