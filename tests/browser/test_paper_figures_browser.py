"""Each HUME figure (1, 12–16) opens in Chromium as an image with data: the PNG decodes to a real size and
the SVG holds one bar per entry or subset (Debian's Chromium via Playwright, pytest-django's live server)."""
from __future__ import annotations

from collections.abc import Callable
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import Page

from measures.results.paper_figures import FIGURES
from tests.hume_paper import RESULTS

pytestmark = pytest.mark.browser

LOAD = """async (urls) => Promise.all(urls.map((url) => new Promise((resolve) => {
  const image = new Image();
  image.onload = () => resolve([url, image.naturalWidth, image.naturalHeight]);
  image.onerror = () => resolve([url, 0, 0]);
  image.src = url;
})))"""
BARS = """async (url) => {
  const text = await (await fetch(url)).text();
  const svg = new DOMParser().parseFromString(text, "image/svg+xml");
  return svg.querySelectorAll("g[id^='patch_']").length;
}"""


@pytest.mark.django_db(transaction=True)
def test_every_figure_opens_as_an_image_with_data(dave, logged_in_page: Callable[[str], Page], live_server) -> None:
    call_command("import_results", str(RESULTS), stdout=StringIO())
    page = logged_in_page("dave")
    page.goto(f"{live_server.url}/results/")
    assert page.locator("#paper-figures a[download]").count() == len(FIGURES)  # linked from the leaderboard

    loaded = page.evaluate(LOAD, [f"/results/figures/{n}.{fmt}" for n in FIGURES for fmt in ("png", "svg")])

    for url, width, height in loaded:
        assert width > 300 and height > 100, url
    for number in FIGURES:
        assert page.evaluate(BARS, f"/results/figures/{number}.svg") >= 6, number  # bars + background patches
