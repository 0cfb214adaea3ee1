"""The report page's PPI panel in Chromium: the two intervals are drawn (an SVG of two lines, the PPI one
narrower), the page breaks no CSP rule and logs no console error, and the form queues a judge's estimates."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from agreement.ppi.estimate_jobs import request_ppi, run_ppi
from agreement.ppi.models import PPIEstimate
from hume.lib.celery_app import app
from tests.ppi_helpers import JUDGE, rated_likert_study

pytestmark = pytest.mark.browser

WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
"""


@pytest.mark.django_db(transaction=True)
def test_the_panel_draws_both_intervals_under_the_csp(dave, logged_in_page: Callable[[str], Page],
                                                      live_server) -> None:
    task, _ = rated_likert_study("ppi-browser", 120, list(range(0, 120, 3)), seed=2)
    row = request_ppi(task, JUDGE, target_half_width=0.3)
    assert run_ppi(row.pk) == "done"
    page = logged_in_page("dave")
    page.context.add_init_script(WATCH)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/reports/task/{task.pk}/")
    panel = page.locator("#ppi")
    expect(panel).to_contain_text("your 40 labels are worth")
    plot = panel.locator("svg.ppi-plot").first
    expect(plot).to_be_visible()
    ppi_line, classical_line = plot.locator("line").nth(0), plot.locator("line").nth(1)
    ppi_width = ppi_line.evaluate("l => l.getBBox().width")
    classical_width = classical_line.evaluate("l => l.getBBox().width")
    assert 0 < ppi_width < classical_width  # the judge narrows the people's interval
    # the form queues a new estimate (a message for a worker) and the panel says it is queued
    page.locator("#ppi select[name=judge]").select_option(JUDGE)
    page.locator("#ppi button[type=submit]").click()
    expect(page.locator("#ppi")).to_contain_text("queued")
    assert PPIEstimate.objects.get(pk=row.pk).status == "queued"
    assert page.evaluate("window.__cspViolations") == []
    assert console == []
    app.control.purge()
