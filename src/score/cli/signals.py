"""SIGTERM ends a command as Ctrl-C does.

A process ended by SIGTERM's default action runs no Python at all: multiprocessing's
temporary folder (``pymp-*``, the fork server's socket) stayed behind, a run folder's
lock file was left to be found stale, and nothing said why the command stopped.  The
installed ``sqlgold`` script (:func:`curate.cli.run`) makes SIGTERM raise
:class:`Terminated`, a :class:`KeyboardInterrupt`, so every path Ctrl-C takes (queries
stopped at once, what was finished kept, one line on stderr, the folder removed at
exit) is SIGTERM's too (a time limit's ``timeout``, a CI job cancelled, ``kill``).
"""

from __future__ import annotations

import signal


class Terminated(KeyboardInterrupt):
    """The process was sent SIGTERM."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated()


def stop_on_sigterm() -> None:
    """Have SIGTERM raise :class:`Terminated` in the main thread (unless the process
    was started with SIGTERM ignored, which stands)."""
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)


def stopped_by(interrupt: KeyboardInterrupt) -> str:
    """What stopped a command, in words.

    >>> stopped_by(Terminated()), stopped_by(KeyboardInterrupt())
    ('SIGTERM', 'Ctrl-C')
    """
    return "SIGTERM" if isinstance(interrupt, Terminated) else "Ctrl-C"
