"""Keeping pyarrow from importing pandas in a process that never holds a pandas object.

pyarrow imports pandas (0.2-0.3 s, most of a trivial ``sqlgold verify``) the first time
it converts Python or NumPy data, only to ask whether that data is a pandas object.
sqlgold never makes one, so a command of its own can answer that question once:
:func:`answer_without_pandas` lets pyarrow's first such check find no pandas, which
pyarrow remembers.  Anything that really needs pandas (``to_pandas``) still imports it
then: pyarrow tries again where pandas is required.  Only sqlgold's own commands call
this; a library caller's process, which may hold pandas objects, is left alone.
"""

from __future__ import annotations

import sys


class _NoPandas:
    """A module finder that says pandas is not installed (a ``None`` in ``sys.modules``
    is not enough: pyarrow's compiled import takes the ``None`` for the module)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


def answer_without_pandas() -> bool:
    """Make pyarrow's optional pandas check find none (unless pandas is already
    imported); True when it took effect."""
    if "pandas" in sys.modules:
        return False
    finder = _NoPandas()
    sys.meta_path.insert(0, finder)
    try:
        import pyarrow as pa

        pa.array([0])  # pyarrow's first conversion checks for pandas now, and remembers
    finally:
        sys.meta_path.remove(finder)
    return True
