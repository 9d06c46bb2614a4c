"""The rendered reports in a real browser: headless Chromium, offline, at a laptop's width (1280 px).

Each page must load with no console error and no request off the machine, every chart must be a decoded inline
image shown at nearly its drawn size with alt text saying what it shows, no table cell may be cut short, and a
full-page screenshot of each lands in outputs/screenshots/. Playwright drives Debian's chromium.
"""

import json
import re
import shutil
import time

import pytest

from headless import Browser, find_chromium
from wismo.core.paths import NOTEBOOKS, OUTPUTS
from wismo.reports.render.versions import FULL_ONLY

CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium found (looked at $CHROMIUM, /usr/bin/chromium, PATH); `make test` installs Debian's chromium",
)
NAMES = [p.stem for p in sorted(NOTEBOOKS.glob("*.ipynb"))]
MIN_SCALE = 0.8  # a chart drawn for ~1,000 px and shown narrower than this would have unreadable labels


@pytest.fixture(scope="module")
def browser():
    started = time.perf_counter()
    with Browser(CHROMIUM, width=1280, height=800) as b:
        yield b
    print(f"\nbrowser checks took {time.perf_counter() - started:.1f} s")


def too_wide(result):
    """The tables of a page that stand out of the column they are in, or scroll inside it."""
    return [t for t in result.tables if t["right"] > t["columnRight"] + 1 or t["scrollWidth"] > t["clientWidth"] + 1]


def test_a_table_wider_than_its_page_is_found(browser, tmp_path):
    cells = "".join(f"<td style='white-space:nowrap'>{'a very long unbreakable cell ' * 3}{i}</td>" for i in range(12))
    page = tmp_path / "wide.html"
    page.write_text(f"<!doctype html><html><body style='max-width:600px'><table><tr>{cells}</tr></table></body></html>")
    result = browser.check(page.as_uri(), tmp_path / "wide.png")
    assert too_wide(result) and too_wide(result)[0]["width"] > 600


def _check(browser, built, page, shot):
    """Load one page, save its screenshot under the build and in outputs/screenshots, and assert the common rules."""
    result = browser.check((built.out / page).as_uri(), built.out / "screenshots" / shot)
    assert not result.errors, f"{page}: {result.errors}"
    assert not result.remote_requests, f"{page} reached off the machine: {result.remote_requests}"
    assert result.layout["scrollWidth"] <= result.layout["innerWidth"], (
        f"{page} scrolls sideways at 1280 px: {result.layout}"
    )
    assert result.screenshot.stat().st_size > 10_000
    assert not too_wide(result), f"{page}: tables wider than the page's column: {too_wide(result)[:3]}"
    (OUTPUTS / "screenshots").mkdir(parents=True, exist_ok=True)
    shutil.copy(result.screenshot, OUTPUTS / "screenshots" / shot)
    return result


def test_index_loads_and_lists_every_report(browser, built_reports):
    result = _check(browser, built_reports, "index.html", "index.png")
    assert result.layout["title"] == "wismo reports" and len(result.images) == 1
    assert result.images[0]["complete"] and result.images[0]["naturalWidth"] > 0
    index = (built_reports.out / "index.html").read_text()
    assert index.count('<article class="report"') == len(built_reports.rendered) == len(NAMES)
    for href in re.findall(r'href="([^"#]+)"', index):
        assert (built_reports.out / href).is_file(), f"index links to a missing file: {href}"


def _charts(executed, reader=False):
    """How many PNG charts the executed notebook holds (the page must show each; the reader's version, each but those
    of the cells left to the full version)."""
    nb = json.loads(executed.read_text())
    return sum(
        "image/png" in o.get("data", {})
        for c in nb["cells"]
        if c["cell_type"] == "code" and not (reader and FULL_ONLY in c["metadata"].get("tags", []))
        for o in c["outputs"]
    )


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("version", ["reader", "full"])
def test_report_loads_with_every_chart(browser, built_reports, name, version):
    rendered = next(r for r in built_reports.rendered if r.name == name)
    page = rendered.reader if version == "reader" else rendered.html
    result = _check(browser, built_reports, page.relative_to(built_reports.out).as_posix(), f"{page.stem}.png")
    assert result.layout["title"].startswith(rendered.title)
    shown = _charts(rendered.executed, reader=version == "reader")
    assert len(result.images) == shown, f"{page.name}: {len(result.images)} images shown, {shown} drawn"
    for i, img in enumerate(result.images, 1):
        assert img["src"].startswith("data:image/png;base64,"), f"{page.name} image {i} is not inline: {img['src']}"
        assert img["complete"] and img["naturalWidth"] > 0 and img["naturalHeight"] > 0, (
            f"{page.name} image {i} is empty: {img}"
        )
        assert img["shownWidth"] >= MIN_SCALE * img["naturalWidth"], (
            f"{page.name} image {i} shrunk to {img['shownWidth']:.0f} px"
        )
        # Alt text: the chart's title and its one-line finding, never nbconvert's placeholder.
        assert img["alt"] and "No description" not in img["alt"] and len(img["alt"]) > 40, (
            f"{page.name} image {i} alt: {img['alt']!r}"
        )
    cut = [c for c in result.cells if c.endswith(("...", "…"))]
    assert not cut, f"{page.name}: table cells cut short: {cut[:3]}"
    if version == "reader":
        assert "\\n" not in "".join(result.cells) and not any(
            c.startswith("[") and c.endswith("]") for c in result.cells
        ), f"{page.name}: a list or an escaped string shown raw in a table"
