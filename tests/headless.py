"""Headless Chromium driven by Playwright (a maintained driver) for checking rendered reports offline.

Playwright drives Debian's chromium (no browser download): one browser, one page per check. Every host name resolves
to nothing and every request that is not a local file is refused and recorded, so a page that reaches out fails
visibly. Every wait has a deadline, so a test cannot hang.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Flags that keep Chromium off the network and quiet, as the machine's own probe runs it.
OFFLINE_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
    "--mute-audio",
    "--host-resolver-rules=MAP * ~NOTFOUND",
]
PAGE_TIMEOUT_MS = 30_000

# What the page reports about each <img>: whether it decoded, its natural size, the size it is shown at, its alt.
IMAGES_JS = """() => Array.from(document.images).map(i => ({
  src: i.currentSrc.slice(0, 40), complete: i.complete, naturalWidth: i.naturalWidth, naturalHeight: i.naturalHeight,
  shownWidth: i.getBoundingClientRect().width, alt: i.alt}))"""
PAGE_JS = """() => ({title: document.title, scrollWidth: document.documentElement.scrollWidth,
  innerWidth: window.innerWidth, height: Math.ceil(document.documentElement.scrollHeight),
  text: document.body ? document.body.innerText.length : 0})"""
# Every table's width against the column it stands in (the nearest block that holds the page's text: a notebook
# cell's output, else the body), for the check that no table is wider than the page.
TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(t => {
  const column = t.closest('.jp-Cell, .jp-OutputArea-output, article, body');
  const box = column.getBoundingClientRect(), own = t.getBoundingClientRect();
  return {width: Math.round(own.width), right: Math.round(own.right), columnRight: Math.round(box.right),
          scrollWidth: t.scrollWidth, clientWidth: t.clientWidth,
          head: (t.querySelector('th') || {innerText: ''}).innerText.slice(0, 60)};
})"""
# Every table cell's text, for the check that no cell was cut short.
CELLS_JS = """() => Array.from(document.querySelectorAll('td, th')).map(c => c.innerText.trim())"""


def find_chromium() -> str | None:
    """The Chromium binary: $CHROMIUM, else Debian's /usr/bin/chromium or whatever `chromium` is on PATH."""
    for candidate in (
        os.environ.get("CHROMIUM"),
        "/usr/bin/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


@dataclass
class PageCheck:
    """What one page did while loading: errors, requests off the machine, its images, table cells and layout."""

    url: str
    errors: list[str] = field(default_factory=list)
    remote_requests: list[str] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    cells: list[str] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    layout: dict[str, Any] = field(default_factory=dict)
    screenshot: Path | None = None


class Browser:
    """Debian's Chromium under Playwright, offline, at a fixed viewport; `check(url, shot)` loads one page."""

    def __init__(self, executable: str, width: int = 1280, height: int = 800) -> None:
        self.executable, self.width, self.height = executable, width, height

    def __enter__(self) -> Browser:
        from playwright.sync_api import sync_playwright

        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=self.executable, args=OFFLINE_FLAGS, headless=True
        )
        return self

    def __exit__(self, *exc: Any) -> None:
        self._browser.close()
        self._playwright.stop()

    def check(self, url: str, screenshot: Path) -> PageCheck:
        """Load `url`, record console errors and remote requests, read its images, cells and layout, screenshot it."""
        result = PageCheck(url)
        page = self._browser.new_page(viewport={"width": self.width, "height": self.height})
        page.set_default_timeout(PAGE_TIMEOUT_MS)

        def route(request_route: Any) -> None:
            request_url = request_route.request.url
            if request_url.startswith(("file:", "data:", "about:")):
                request_route.continue_()
            else:
                result.remote_requests.append(request_url)
                request_route.abort()

        page.route("**/*", route)
        page.on("console", lambda m: result.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: result.errors.append(str(e)))
        try:
            page.goto(url, wait_until="load")
            result.images = page.evaluate(IMAGES_JS)
            result.cells = page.evaluate(CELLS_JS)
            result.tables = page.evaluate(TABLES_JS)
            result.layout = page.evaluate(PAGE_JS)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
            result.screenshot = screenshot
        finally:
            page.close()
        return result
