"""``python -m curate.cli``: the ``sqlgold`` command."""

from curate.cli import run

run()
