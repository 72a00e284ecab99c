"""score.sqlglot_quiet: one thread's sqlglot warnings dropped, the others' kept."""

from __future__ import annotations

import logging
import threading

from score.sqlglot_quiet import quiet


class Kept(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_a_quiet_thread_does_not_silence_another():
    logger = logging.getLogger("sqlglot")
    kept = Kept()
    logger.addHandler(kept)
    inside, logged = threading.Event(), threading.Event()

    def loud() -> None:
        inside.wait(5)  # while the main thread is inside quiet()
        logger.warning("from the other thread")
        logged.set()

    other = threading.Thread(target=loud)
    other.start()
    try:
        with quiet():
            inside.set()
            logged.wait(5)
            logger.warning("from the quiet thread")
            with quiet():  # nested: still quiet after the inner block
                pass
            logger.warning("still quiet")
        logger.warning("after the block")
    finally:
        other.join()
        logger.removeHandler(kept)
    assert kept.messages == ["from the other thread", "after the block"]
