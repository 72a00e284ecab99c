"""The context settings every ``sqlgold`` command is made with: ``-h`` as well as ``--help``.

Each command carries them itself, not only the top group: a command run on its own (a stage's
command from Python, a test, the reference pages) makes its help option from its own
settings, and click keeps the first one it made.
"""

from __future__ import annotations

HELP = {"help_option_names": ["-h", "--help"]}
