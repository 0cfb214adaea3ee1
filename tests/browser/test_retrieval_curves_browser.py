"""The retrieval page's nDCG@k / Recall@k curves are drawn under the app's CSP (issue 28): matplotlib's SVG
carried inline `style` attributes, which `style-src 'self'` refuses, so Chromium painted the chart as a black
rectangle and logged a violation per element. Now: no violation, and the chart has its lines on white."""
from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from PIL import Image
from playwright.sync_api import Page

from agreement.retrieval.evaluations import run_evaluation
from agreement.retrieval.models import Evaluation, Ranking
from tests.browser.test_csp_every_page import WATCH
from tests.retrieval_helpers import judged_collection

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_curves_render_under_the_csp(dave, logged_in_page: Callable[..., Page], live_server) -> None:
    judged_collection()
    Evaluation.objects.create(collection_id=Ranking.objects.first().collection_id)
    assert run_evaluation(Ranking.objects.first().collection_id, claimed_by="test") == "computed"
    page = logged_in_page("dave")
    page.context.add_init_script(WATCH)
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/retrieval/MiniFact/")
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__cspViolations") == [] and errors == []
    chart = page.locator("figure.plot svg")
    assert chart.get_attribute("role") == "img" and "MiniFact" in chart.get_attribute("aria-label")
    pixels = Image.open(io.BytesIO(chart.screenshot())).convert("RGB")
    colours = pixels.getcolors(maxcolors=1 << 20)
    share = {colour: count / (pixels.width * pixels.height) for count, colour in colours}
    assert share.get((255, 255, 255), 0) > 0.5  # a white background, not a black block
    assert share.get((0, 0, 0), 0) < 0.2
    assert len(colours) > 20  # lines, text and antialiasing
    assert "mathdefault" not in chart.inner_html()  # the log axis reads 1, 10, 100, not "$\\mathdefault{10^{0}}$"
