"""Content-Security-Policy: every page of every role carries the header, and Chromium reports no CSP violation
and no console error on any of them; /api/docs/ renders with no network but the app's own (issue 14, 5 and 9).

The pages are found the way a person finds them: from each role's home page, following the links of every page
reached (downloads, exports and the log-out form aside), on the demo data the run command loads.
"""
from __future__ import annotations

from collections.abc import Callable
from io import StringIO
from urllib.parse import urldefrag, urlsplit

import pytest
from django.core.management import call_command
from django.test import override_settings
from playwright.sync_api import Page, expect

pytestmark = pytest.mark.browser

MAX_PAGES = 40  # per role: the demo has more item pages than that, and they share their templates
SKIP = ("/accounts/logout", "/export", ".csv", ".json", ".jsonl", ".zip", ".svg", ".png", "/plot", "/api/schema")
WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", e =>
  window.__cspViolations.push(
    `${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
"""


def crawl(page: Page, base_url: str, start: str) -> dict[str, list[str]]:
    """{path: problems} for every page reached from `start` by same-site links."""
    problems: dict[str, list[str]] = {}
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text) if msg.type == "error" else None)
    queue, seen = [start], {start}
    while queue and len(problems) < MAX_PAGES:
        path = queue.pop(0)
        console.clear()
        response = page.goto(base_url + path)
        page.wait_for_load_state("networkidle")
        found = []
        if response is None or response.status >= 400:
            found.append(f"HTTP {response.status if response else 'no response'}")
        elif "default-src 'self'" not in (response.headers.get("content-security-policy") or ""):
            found.append("no Content-Security-Policy header")
        found += page.evaluate("window.__cspViolations") + [f"console: {text}" for text in console]
        problems[path] = found
        links = page.eval_on_selector_all("a[href]:not([download])", "els => els.map(a => a.href)")
        for href in links:
            url = urldefrag(href)[0]
            parts = urlsplit(url)
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            if url.startswith(base_url) and target not in seen and not any(s in target for s in SKIP):
                seen.add(target)
                queue.append(target)
    return problems


EXPECTED = {"alice": {"/", "/annotate/"}, "bob": {"/", "/annotate/"},
            "carol": {"/", "/admin/", "/api/docs/", "/llm/", "/manage/batches/"},
            "dave": {"/", "/api/docs/", "/llm/", "/reports/"}}


@pytest.fixture
def demo(transactional_db: None) -> None:
    with override_settings(DEBUG=True):  # the development demo (pytest-django turns DEBUG off)
        call_command("load_demo", stdout=StringIO())


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("username", ["alice", "bob", "carol", "dave"])
def test_every_page_of_every_role_has_a_csp_and_breaks_none_of_it(
        demo: None, username: str, logged_in_page: Callable[..., Page], live_server) -> None:
    page = logged_in_page(username, "hume-demo")
    page.context.add_init_script(WATCH)
    problems = crawl(page, live_server.url, "/")
    assert EXPECTED[username] <= set(problems), sorted(problems)  # the crawl reached each role's own pages
    print(f"{username}: {len(problems)} pages checked")
    assert {path: found for path, found in problems.items() if found} == {}


@pytest.mark.django_db(transaction=True)
def test_the_login_page_has_a_csp_too(page: Page, live_server) -> None:
    page.context.add_init_script(WATCH)
    response = page.goto(f"{live_server.url}/accounts/login/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    assert page.evaluate("window.__cspViolations") == []


@pytest.mark.django_db(transaction=True)
def test_the_api_docs_render_offline(dave, logged_in_page: Callable[..., Page], live_server) -> None:
    page = logged_in_page("dave")
    page.context.add_init_script(WATCH)
    outside: list[str] = []

    def only_the_app(route) -> None:
        if route.request.url.startswith(live_server.url):
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    page.route("**/*", only_the_app)
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("HUME annotation platform API", timeout=20_000)
    expect(page.locator(".opblock-tag-section").first).to_be_visible()
    assert outside == [] and page.evaluate("window.__cspViolations") == []
