"""The JSON Schemas in ``schemas/`` and validation errors that say where.

>>> problems = validation_errors("task", {"id": "x"})
>>> problems[0].startswith("$: ")
True

A ``pattern`` is matched as JSON Schema says (ECMA 262): its ``$`` is the end of the
text.  Python's ``re`` also lets ``$`` match before a final newline, so an id ``"t1\\n"``
passed ``^[A-Za-z0-9][A-Za-z0-9_./:-]*$`` and became a task id, a file name and a page
anchor with a line break in it; here a ``$`` ending the pattern is the text's end:

>>> [e.split(": ")[0] for e in validation_errors("predictions", {"task_id": "t1",
...  "language": "en\\n", "sql": "SELECT 1"})]
['$.language']
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
    return _ECMA_PATTERNS()(schema)


@cache
def _ECMA_PATTERNS():  # noqa: N802 - a validator class
    """Draft 2020-12 with ``pattern`` matched as ECMA 262 does (see the module docstring)."""
    import re

    import jsonschema
    from jsonschema.exceptions import ValidationError

    def pattern(validator, expected, instance, schema):
        if not validator.is_type(instance, "string"):
            return
        ecma = (
            expected[:-1] + r"\Z"
            if expected.endswith("$") and not expected.endswith("\\$")
            else expected
        )
        if re.search(ecma, instance) is None:
            yield ValidationError(f"{instance!r} does not match {expected!r}")

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": pattern})


def validation_errors(name: str, record: Any) -> list[str]:
    """Every violation of schema ``name`` as ``"<json path>: <message>"``, sorted by path."""
    errors = sorted(validator(name).iter_errors(record), key=lambda e: (e.json_path, e.message))
    return [f"{e.json_path}: {e.message}" for e in errors]
