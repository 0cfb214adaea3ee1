"""The report page of a task of every kind shows its charts in Chromium: each chart is an image that decodes
to a real size, its SVG holds marks (bars, cells or points), and the page breaks no CSP rule and logs no
console error (Debian's Chromium via Playwright, pytest-django's live server)."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from agreement.core.reports import report_in_process
from tests.kind_samples import SampleTable
from tests.report_kind_tasks import KINDS, build_kind_task

pytestmark = pytest.mark.browser

WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__cspViolations.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"}`));
"""
MARKS = """async (url) => {
  const svg = new DOMParser().parseFromString(await (await fetch(url)).text(), "image/svg+xml");
  return svg.querySelectorAll("g[id^='patch_'], use").length;
}"""
EXPECTED = SampleTable("report_charts")  # each kind's own charts (its samples.py)


@pytest.mark.django_db(transaction=True)
def test_every_kinds_report_page_shows_its_charts_as_images_with_data(
        dave, logged_in_page: Callable[[str], Page], live_server) -> None:
    tasks = {kind: build_kind_task(kind) for kind in KINDS}
    for task in tasks.values():
        report_in_process(task)
    page = logged_in_page("dave")
    page.context.add_init_script(WATCH)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)

    for kind, task in tasks.items():
        page.goto(f"{live_server.url}/reports/task/{task.pk}/")
        images = page.locator("#charts figure img")
        expect(images).to_have_count(len(EXPECTED[kind]))
        expect(page.locator("#human-protocol #combination")).to_contain_text("The human score:")
        for index in range(len(EXPECTED[kind])):
            image = images.nth(index)
            image.scroll_into_view_if_needed()  # the images load lazily
            width, height = image.evaluate("img => img.decode().then(() => [img.naturalWidth, img.naturalHeight])")
            source = image.get_attribute("src")
            assert width > 200 and height > 150, (kind, source)
            assert page.evaluate(MARKS, source) >= 4, (kind, source)
        assert page.evaluate("window.__cspViolations") == [], kind
    assert console == []
