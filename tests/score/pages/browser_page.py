"""A page opened in the browser with every request watched and every console error kept."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class OpenedPage:
    page: Any
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # any URL other than the file itself

    def visible_ids(self) -> list[str]:
        return self.page.eval_on_selector_all("#rows tr", "rs => rs.map(r => r.dataset.id)")

    def column(self, index: int) -> list[str]:
        return self.page.eval_on_selector_all(
            "#rows tr", f"rs => rs.map(r => r.children[{index}].textContent)"
        )


def open_page(browser: Any, path: Path, fragment: str = "", **context: Any) -> OpenedPage:
    """Open ``path`` (+ ``#fragment``): requests to anything but the file are refused and
    recorded, console errors and uncaught exceptions are recorded."""
    ctx = browser.new_context(viewport={"width": 1280, "height": 900}, **context)
    page = ctx.new_page()
    opened = OpenedPage(page)
    url = path.resolve().as_uri()

    def route(r: Any) -> None:
        if r.request.url.split("#")[0] == url or r.request.url.startswith("data:"):
            r.continue_()
        else:
            opened.requests.append(r.request.url)
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: opened.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: opened.errors.append(str(e)))
    page.on("requestfailed", lambda r: None)
    page.goto(url + (f"#{fragment}" if fragment else ""))
    if context.get("java_script_enabled", True):
        page.wait_for_selector("body[data-ready]", timeout=10_000)
    return opened


#: counts the distinct colours of a PNG, drawn by the browser itself
DISTINCT_COLOURS = """async (b64) => {
  const img = new Image();
  img.src = "data:image/png;base64," + b64;
  await img.decode();
  const c = document.createElement("canvas");
  c.width = img.width; c.height = img.height;
  const g = c.getContext("2d");
  g.drawImage(img, 0, 0);
  const d = g.getImageData(0, 0, c.width, c.height).data;
  const seen = new Set();
  for (let i = 0; i < d.length; i += 16) seen.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return seen.size;
}"""
