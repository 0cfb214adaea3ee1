"""A new admin, from the UI alone: import HUME's results as a .zip, read the leaderboard and a task, download the plot.

Debian's Chromium through Playwright against pytest-django's live server, with the shared fixtures of
tests/browser/conftest.py (``page``, ``logged_in_page``, ``screenshot``). Screenshots go to
artifacts/screenshots/results-*.png (gitignored).
"""
from __future__ import annotations

import shutil
import zipfile
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import SCREENSHOTS
from tests.hume_paper import RESULTS

SLOW = 30_000  # ms: importing 293 files on a busy machine

pytestmark = pytest.mark.browser

@pytest.mark.django_db(transaction=True)
def test_an_admin_imports_results_reads_the_comparison_and_downloads_the_plot(
        carol, logged_in_page: Callable[[str], Page], screenshot, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "mteb-hume-results"), "zip", root_dir=RESULTS.parent,
                                  base_dir=RESULTS.name)
    page = logged_in_page("carol")

    def shoot(name: str) -> None:
        screenshot(page, f"results-{name}")

    # From the home page to the (empty) comparison, then to the import page
    page.click("text=Humans vs models")
    expect(page.locator("#results-body")).to_contain_text("No results yet")
    page.click("nav >> text=Import results")
    page.set_input_files("#id_file", archive)
    shoot("1-import-form")
    page.click("button:has-text('Import')")
    expect(page.locator(".messages")).to_contain_text("14 model(s); 18 new revision(s); 456 score(s) added",
                                                      timeout=SLOW)
    expect(page.locator("#models tr[data-model='baseline/Human'][data-revision='v1.0']")).to_contain_text("current")
    shoot("2-imported-models")

    # HUME Table 1: the human reference ranks 4th of 14 with 77.6
    page.click("nav >> text=Leaderboard")
    expect(page.locator("#human-rank")).to_contain_text("rank 4th of 14 (among 13 models)")
    expect(page.locator("#human-rank")).to_contain_text("77.6")
    human_row = page.locator("#leaderboard tr[data-name='baseline/Human']")
    expect(human_row.locator("td").first).to_have_text("4")
    expect(human_row.locator("td.best-overall")).to_have_text("77.6")
    expect(page.locator("#win-rates")).to_contain_text("15%")
    shoot("3-leaderboard")

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
    shoot("4-per-task")
    emotion.locator("a").click()
    subset = page.locator("section.subset[data-language='eng-Latn']")
    expect(subset.locator(".human-score")).to_have_text("45.8")
    expect(subset.locator(".human-ci")).to_have_text("[32.6, 59.7]")
    expect(subset.locator("tr[data-model='NovaSearch/jasper_en_vision_language_v1']")).to_contain_text("75.4*")
    expect(page.locator("#figure svg")).to_be_visible()
    shoot("5-emotion-task")

    with page.expect_download(timeout=SLOW) as download_info:
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
    shoot("8-leaderboard-phone")


@pytest.mark.django_db(transaction=True)
def test_a_bad_upload_says_what_is_wrong_in_the_page(carol, logged_in_page, screenshot, live_server, tmp_path):
    bad = tmp_path / "results.zip"
    with zipfile.ZipFile(bad, "w") as archive:
        archive.writestr("acme__m/r1/HUMESTS12.json", '{"task_name": "HUMESTS12"}')
    page = logged_in_page("carol")
    page.goto(f"{live_server.url}/results/import/")
    page.set_input_files("#id_file", str(bad))
    page.click("button:has-text('Import')")
    expect(page.locator("#import-errors")).to_contain_text(
        "results.zip!acme__m/r1/HUMESTS12.json: scores: missing key (not an MTEB TaskResult)")
    screenshot(page, "results-7-import-error")
