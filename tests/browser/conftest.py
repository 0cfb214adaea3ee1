"""Browser fixtures: Debian's Chromium driven by Playwright against pytest-django's live server.

`browser` (one per session), `page` (a fresh context per test, failing the test on a page error),
`logged_in_page(username)` (logs in through the real login form) and `screenshot(page, name)` (writes
artifacts/screenshots/<name>.png, gitignored). Tests using them need a transactional database:
mark them `@pytest.mark.django_db(transaction=True)`, because the live server runs in another thread.
"""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD, REPO, skip_unless_ci

# Playwright's sync API runs an event loop in this thread; the ORM calls tests make between browser steps
# are still plain synchronous calls, so Django's async-safety guard would be a false alarm here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = REPO / "artifacts" / "screenshots"
LAPTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not shutil.which(CHROMIUM) and not Path(CHROMIUM).exists():
        skip_unless_ci(f"no Chromium at {CHROMIUM} (scripts/services.sh installs Debian's)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A page in its own context (own cookies and localStorage); uncaught page errors fail the test."""
    context = browser.new_context(viewport=LAPTOP)
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.page_errors = errors  # type: ignore[attr-defined]
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def log_in(page: Page, base_url: str, username: str, password: str = PASSWORD) -> Page:
    page.goto(f"{base_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")
    return page


@pytest.fixture
def logged_in_page(page: Page, live_server) -> Callable[[str], Page]:
    """Call with a username (alice, bob, carol, dave or one of yours) to get the page logged in as them."""
    return lambda username, password=PASSWORD: log_in(page, live_server.url, username, password)


@pytest.fixture
def screenshot() -> Callable[[Page, str], Path]:
    def take(page: Page, name: str, *, full_page: bool = True) -> Path:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        return path

    return take
