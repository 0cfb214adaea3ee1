"""The demo's retrieval page in Chromium, as the demo researcher sees it at laptop (1366 px) and phone (390 px)
width: the leaderboard and the curves drawn (not a solid block), no CSP refusal, nothing wider than the screen."""
from __future__ import annotations

import io
from collections.abc import Callable
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import override_settings
from PIL import Image
from playwright.sync_api import Page

from agreement.retrieval.demo_collection import COLLECTION
from tests.browser.conftest import PHONE
from tests.browser.test_csp_every_page import WATCH

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
# what sticks out of the screen (and not inside a scrolling table), for the failure message
WIDER_THAN_SCREEN = ("Array.from(document.querySelectorAll('main *')).filter(e => e.getBoundingClientRect().right > "
                     "innerWidth + 1 && !e.parentElement.closest('.table-scroll')).map(e => e.tagName + '#' + e.id)"
                     ".slice(0, 12)")


def test_the_demo_retrieval_page_draws_its_curves_at_laptop_and_phone_width(
        logged_in_page: Callable[..., Page], live_server, screenshot) -> None:
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=StringIO())
    call_command("demo_retrieval", stdout=StringIO())
    page = logged_in_page("dave", "hume-demo")
    page.context.add_init_script(WATCH)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/retrieval/")
    page.click(f"text={COLLECTION}")
    for name, viewport in (("laptop", {"width": 1366, "height": 900}), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.reload()
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__cspViolations") == [] and errors == []
        assert sorted(page.locator("#board tbody th").all_inner_texts()) == ["all-MiniLM-L6-v2", "bm25"]
        # the figure, not the drawing: on a phone the drawing keeps a readable width and scrolls inside its figure
        chart = page.locator("figure.plot").first
        chart.scroll_into_view_if_needed()
        pixels = Image.open(io.BytesIO(chart.screenshot())).convert("RGB")
        colours = pixels.getcolors(maxcolors=1 << 20)
        white = next((count for count, colour in colours if colour == (255, 255, 255)), 0)
        assert white / (pixels.width * pixels.height) > 0.5 and len(colours) > 20, name  # lines on white
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), (name, page.evaluate(
            WIDER_THAN_SCREEN))
        screenshot(page, f"retrieval_demo_{name}")
