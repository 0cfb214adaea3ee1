"""A new admin, from the UI alone: import HUME's results as a .zip, read the leaderboard and a task, download the plot.

Debian's Chromium through Playwright against pytest-django's live server. Screenshots go to
artifacts/screenshots/results-*.png (gitignored). The fixtures are local to this file so it runs without
the shared browser conftest; they follow the same conventions (flags from HELPERS.md, page errors fail).
"""
from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import PASSWORD, REPO

# Playwright's sync API runs an event loop in this thread; the ORM calls between browser steps are plain
# synchronous calls, so Django's async-safety guard would be a false alarm.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

from playwright.sync_api import Browser, Page, expect, sync_playwright

RESULTS = Path(os.environ.get("HUME_RESULTS_DIR", REPO.parent / "shared" / "data" / "mteb-hume-results"))
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
SCREENSHOTS = REPO / "artifacts" / "screenshots"

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not RESULTS.is_dir(), reason=f"no results folder at {RESULTS}")]


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def laptop(chromium: Browser) -> Iterator[Page]:
    context = chromium.new_context(viewport={"width": 1280, "height": 800}, accept_downloads=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def fast_hashing(settings) -> None:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def shoot(page: Page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"results-{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


@pytest.mark.django_db(transaction=True)
def test_an_admin_imports_results_reads_the_comparison_and_downloads_the_plot(
        fast_hashing, carol, live_server, laptop, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "mteb-hume-results"), "zip", root_dir=RESULTS.parent,
                                  base_dir=RESULTS.name)
    page = laptop
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")

    # From the home page to the (empty) comparison, then to the import page
    page.click("text=Humans vs models")
    expect(page.locator("#results-body")).to_contain_text("No results yet")
    page.click("nav >> text=Import results")
    page.set_input_files("#id_file", archive)
    shoot(page, "1-import-form")
    page.click("button:has-text('Import')")
    expect(page.locator(".messages")).to_contain_text("14 model(s); 18 new revision(s); 456 score(s) added")
    expect(page.locator("#models tr[data-model='baseline/Human'][data-revision='v1.0']")).to_contain_text("current")
    shoot(page, "2-imported-models")

    # HUME Table 1: the human reference ranks 4th of 14 with 77.6
    page.click("nav >> text=Leaderboard")
    expect(page.locator("#human-rank")).to_contain_text("rank 4th of 14 (among 13 models)")
    expect(page.locator("#human-rank")).to_contain_text("77.6")
    human_row = page.locator("#leaderboard tr[data-name='baseline/Human']")
    expect(human_row.locator("td").first).to_have_text("4")
    expect(human_row.locator("td.best-overall")).to_have_text("77.6")
    expect(page.locator("#win-rates")).to_contain_text("15%")
    shoot(page, "3-leaderboard")

    # Unticking Arabic re-renders the table through htmx (and the URL follows)
    page.uncheck("input[name=lang][value='ara-Arab']")
    page.wait_for_url(lambda url: "ara-Arab" not in url and "eng-Latn" in url)
    expect(human_row.locator("td").last).to_have_text("23")
    page.check("input[name=lang][value='ara-Arab']")
    expect(human_row.locator("td").last).to_have_text("26")

    # HUME Table 8, then EmotionClassification with its plot
    page.click("nav >> text=Per task")
    emotion = page.locator("#per-task tr[data-task='HUMEEmotionClassification']")
    expect(emotion).to_contain_text("45.8 [32.6, 59.7]")
    expect(emotion).to_contain_text("75.4*")
    expect(emotion).to_contain_text("165% of human at κ = 0.39")
    shoot(page, "4-per-task")
    emotion.locator("a").click()
    subset = page.locator("section.subset[data-language='eng-Latn']")
    expect(subset.locator(".human-score")).to_have_text("45.8")
    expect(subset.locator(".human-ci")).to_have_text("[32.6, 59.7]")
    expect(subset.locator("tr[data-model='NovaSearch/jasper_en_vision_language_v1']")).to_contain_text("75.4*")
    expect(page.locator("#figure svg")).to_be_visible()
    shoot(page, "5-emotion-task")

    with page.expect_download() as download_info:
        page.click("text=Download PNG")
    download = download_info.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    assert download.suggested_filename == "hume-figure2-emotionclassification.png"
    assert saved.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    shutil.copy(saved, SCREENSHOTS / "results-6-downloaded-plot.png")

    # On a phone the wide table scrolls inside its card; the page itself does not
    page.set_viewport_size({"width": 390, "height": 844})
    page.click("nav >> text=Leaderboard")
    expect(page.locator("#leaderboard")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shoot(page, "8-leaderboard-phone")


@pytest.mark.django_db(transaction=True)
def test_a_bad_upload_says_what_is_wrong_in_the_page(fast_hashing, carol, live_server, laptop, tmp_path):
    bad = tmp_path / "results.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("acme__m/r1/HUMESTS12.json", '{"task_name": "HUMESTS12"}')
    page = laptop
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("#id_username", "carol")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/results/import/")
    page.set_input_files("#id_file", str(bad))
    page.click("button:has-text('Import')")
    expect(page.locator("#import-errors")).to_contain_text(
        "results.zip!acme__m/r1/HUMESTS12.json: scores: missing key (not an MTEB TaskResult)")
    shoot(page, "7-import-error")
