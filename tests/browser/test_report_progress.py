"""In a real browser: the report page shows the run's progress (htmx polling), then the new numbers; Arabic
item text reads right to left; a results page waits for a missing report the same way."""
from __future__ import annotations

import pytest

from tests.report_builders import answers_from_columns, build_task, import_answers

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]

ARABIC = "الخدمة في هذا المطعم ممتازة"


def test_recompute_shows_progress_then_the_new_report(start_worker, logged_in_page, live_server, dave,
                                                       screenshot) -> None:
    start_worker(report_pause=3)  # the worker holds the run long enough to be seen
    records = [{"text": ARABIC, "label": "pos"}, {"text": "x", "label": "neg"}]
    task = build_task("classification", "Sentiment-ar", records, labels=["neg", "pos"], language="ara-Arab")
    import_answers(task, answers_from_columns({"layla": ["pos", "neg"], "omar": ["pos", "pos"]}))
    page = logged_in_page("dave")
    page.goto(f"{live_server.url}/reports/task/{task.pk}/")
    # answers but no report (a bulk import sends no signal): the page queued the first one itself
    page.wait_for_selector("#report-status progress", timeout=20_000)
    page.wait_for_selector("#agreement", timeout=60_000)  # HX-Refresh reloads the page with the numbers

    page.click("#report-status button")  # Recompute now
    page.wait_for_selector("#report-status progress", timeout=20_000)
    screenshot(page, "report-progress")
    page.locator("#report-status progress").wait_for(state="detached", timeout=60_000)
    page.wait_for_selector("#agreement", timeout=60_000)

    assert "Fleiss' κ" in page.inner_text("#agreement")
    assert "Computed" in page.inner_text("#report-status")
    box = page.locator(".text-box", has_text=ARABIC)
    assert box.evaluate("el => getComputedStyle(el).direction") == "rtl"
    assert page.locator(".text-box", has_text="x").first.evaluate("el => getComputedStyle(el).direction") == "ltr"


def test_a_results_page_waits_for_a_missing_report_then_shows_the_human_score(start_worker, logged_in_page,
                                                                              live_server, dave) -> None:
    """No stored report: the page queues one and polls; once a worker stored it the page reloads with the
    score (majority vote: 4 of 5 right → 80.0)."""
    task = build_task("classification", "Emotion", [{"text": f"t{i}", "label": "a"} for i in range(5)],
                      labels=["a", "b"], mteb_task_name="HUMEEmotionClassification", mteb_subset="default")
    import_answers(task, answers_from_columns({"ann1": ["a", "a", "a", "a", "b"]}))
    page = logged_in_page("dave")
    page.goto(f"{live_server.url}/results/tasks/HUMEEmotionClassification/?lang=eng-Latn")
    assert "queued" in page.inner_text("#pending-reports")

    start_worker()
    page.wait_for_selector(".human-score", timeout=60_000)  # HX-Refresh reloaded the page with the score

    assert page.inner_text(".human-score").strip() == "80.0"
    assert page.locator("#pending-reports").count() == 0
