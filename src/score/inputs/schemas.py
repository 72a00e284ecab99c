"""The JSON Schemas in ``schemas/`` and validation errors that say where.

>>> problems = validation_errors("task", {"id": "x"})
>>> problems[0].startswith("$: ")
True
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # jsonschema is imported by the first validator (about 0.1 s)
    import jsonschema

#: The schemas, installed with the package (``score/schemas`` in a checkout is a link to
#: the project's ``schemas/``, so the files are kept once and a wheel carries them).
SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas"


def schema_path(name: str) -> Path:
    """``schemas/<name>.schema.json``, as installed."""
    return SCHEMA_DIR / f"{name}.schema.json"


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    """A checked Draft 2020-12 validator for ``schemas/<name>.schema.json``."""
    import jsonschema

    path = schema_path(name)
    with path.open(encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validation_errors(name: str, record: Any) -> list[str]:
    """Every violation of schema ``name`` as ``"<json path>: <message>"``, sorted by path."""
    errors = sorted(validator(name).iter_errors(record), key=lambda e: (e.json_path, e.message))
    return [f"{e.json_path}: {e.message}" for e in errors]
