"""The variants of a test suite opened in turns: each turn's executors are opened (query
processes started, databases made if need be, fingerprints checked) while the caller
judges the turn before, and every executor opened is closed however the caller stops
(:mod:`score.scoring.suite_phase` judges the variants turn by turn)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from score.execution.executor import Executor
from score.suite.suite_file import Variant


def opened_in_turn(
    open_one: Callable[[Variant], Executor], variants: Sequence[Variant], width: int = 1
) -> Generator[list[tuple[Variant, Executor]], None, None]:
    """The variants in groups of ``width``, in order, each with its executor; the next
    group is opened (its query processes started, databases made if need be and
    fingerprints checked) while the caller works with this one.  Every executor opened
    is closed, however the caller stops."""
    width = max(1, width)
    groups = [list(variants[k : k + width]) for k in range(0, len(variants), width)]
    with ThreadPoolExecutor(max_workers=width) as pool:
        ahead = [pool.submit(open_one, v) for v in groups[0]] if groups else []
        try:
            for k, group in enumerate(groups):
                opened = _all_opened(ahead)
                ahead = (
                    [pool.submit(open_one, v) for v in groups[k + 1]] if k + 1 < len(groups) else []
                )
                with contextlib.ExitStack() as stack:
                    for executor in opened:
                        stack.enter_context(executor)
                    yield list(zip(group, opened, strict=True))
        finally:
            for future in ahead:
                with contextlib.suppress(Exception):
                    future.result().close()


def _all_opened(futures: Sequence[Future[Executor]]) -> list[Executor]:
    """The executors ``futures`` open; if one could not be opened, the others are closed
    and its error is raised."""
    opened: list[Executor] = []
    error: BaseException | None = None
    for future in futures:
        try:
            opened.append(future.result())
        except BaseException as e:  # noqa: BLE001 - raised below, the others closed first
            error = error or e
    if error is not None:
        for executor in opened:
            executor.close()
        raise error
    return opened
