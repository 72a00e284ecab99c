"""A headless Chromium for the page tests: Debian's ``chromium`` driven by Playwright.

Playwright never downloads a browser here: it launches the system's executable
(``$SQLGOLD_CHROMIUM``, else ``chromium`` on the PATH, else /usr/bin/chromium).  The
browser tests skip, saying why, only when no Chromium can be found.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest


def chromium_path() -> str | None:
    for candidate in (
        os.environ.get("SQLGOLD_CHROMIUM"),
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
        "/usr/bin/chromium",
    ):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium found (install Debian's chromium; .ci/run does)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (make test installs .[pages])"
    )
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()
