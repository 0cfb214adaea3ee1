"""The annotator models page in Chromium: reached from the report page's link, it shows every model's table and
breaks no CSP rule (no inline style or script) and logs no console error (Playwright, pytest-django's live
server)."""
from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from agreement.core.reports import report_in_process
from tests.test_report_aggregation import spam_crowd

pytestmark = pytest.mark.browser

WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
"""


@pytest.mark.django_db(transaction=True)
def test_the_quality_page_opens_from_the_report_and_keeps_the_csp(
        dave, settings, logged_in_page: Callable[[str], Page], live_server) -> None:
    settings.ANNOTATOR_MODELS_MAX_ANSWERS = 1000
    task = spam_crowd("spam-browser")
    report_in_process(task)
    page = logged_in_page("dave")
    page.context.add_init_script(WATCH)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)

    page.goto(f"{live_server.url}/reports/task/{task.pk}/")
    page.locator("#annotator-models-link").click()
    expect(page).to_have_url(f"{live_server.url}/reports/task/{task.pk}/annotator-models/")
    for method in ("majority", "dawid-skene", "one-coin", "glad", "mace"):
        expect(page.locator(f"#model-{method} tbody tr")).to_have_count(5)
    lowest = page.locator("#model-dawid-skene tbody tr").first  # lowest skill first: a spammer
    expect(lowest).to_have_attribute("data-annotator", re.compile(r"^spam\d$"))
    assert page.evaluate("window.__cspViolations") == []
    assert console == []
