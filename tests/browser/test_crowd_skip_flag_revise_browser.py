"""A participant skips, flags and goes back to revise in Chromium, with the loop's keys (docs/crowd.md, "Skip,
flag and revise"): s opens the skip box, f the flag box, Enter there sends that box, p goes back to the
previous answer, Enter saves the revision."""
from __future__ import annotations

import pytest
from django.core.cache import caches

from annotation.models import Annotation, AnnotationRevision
from tests.browser.test_crowd_study_browser import answer_by_keys, item_id, next_page
from tests.crowd_helpers import arrival_url, make_crowd_task, make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def press_on_body(page, key: str) -> None:
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press(key)


def test_a_participant_skips_flags_and_revises_with_the_keyboard(page, live_server, screenshot):
    link = make_study(make_crowd_task(n=6, attention=0, practice=0), consent="", quota=3)
    page.goto(live_server.url + arrival_url(link, 1))
    page.click("button[value=instructions]")

    skipped = item_id(page)  # s: the skip box opens on its reason; Enter there skips
    press_on_body(page, "s")
    assert page.evaluate("document.activeElement.name") == "skip_reason"
    page.select_option("#id_skip_reason", "broken")
    with next_page(page):
        page.keyboard.press("Enter")
    assert "Item 1 of 3" in page.inner_text(".loop-head") and item_id(page) != skipped

    flagged = item_id(page)  # f: the flag box; tick a reason, type a comment, Enter flags and skips
    press_on_body(page, "f")
    page.keyboard.press("Space")  # the focused first tag: ambiguous
    page.fill("input[name=flag_comment]", "two readings")
    with next_page(page):
        page.press("input[name=flag_comment]", "Enter")

    first = item_id(page)
    answer_by_keys(page, "1")  # positive
    second = item_id(page)
    answer_by_keys(page, "2")  # negative
    current = item_id(page)

    press_on_body(page, "p")  # back to the previous answer, then further back
    page.wait_for_selector("#revising")
    assert item_id(page) == second and page.is_checked("input[value=negative]")
    with page.expect_navigation():
        press_on_body(page, "p")
    assert item_id(page) == first
    screenshot(page, "crowd-revise")
    answer_by_keys(page, "2")  # revise: positive → negative, Enter saves
    assert item_id(page) == current and "Item 3 of 3" in page.inner_text(".loop-head")
    answer_by_keys(page, "1")
    assert page.inner_text("#completion-code") == "C0DE42"

    skip = Annotation.objects.get(item_id=skipped)
    assert skip.skipped and skip.skip_reason == "The text is broken or unreadable"
    flag = Annotation.objects.get(item_id=flagged)
    assert (flag.skipped, flag.flagged, flag.flag_comment) == (True, True, "ambiguous; two readings")
    revised = Annotation.objects.get(item_id=first)
    assert revised.value == "negative"
    assert list(AnnotationRevision.objects.filter(annotation=revised).values_list("value", flat=True)) == ["positive"]
    assert Annotation.objects.filter(skipped=False).count() == 3  # the quota counted answers, not skips
    assert not page.page_errors


def test_the_last_answer_is_revised_from_the_completion_page_and_the_code_stays(page, live_server, screenshot):
    link = make_study(make_crowd_task(n=6, attention=0, practice=0), consent="", quota=2)
    page.goto(live_server.url + arrival_url(link, 1))
    page.click("button[value=instructions]")
    first = item_id(page)
    answer_by_keys(page, "1")  # positive
    last = item_id(page)
    answer_by_keys(page, "1")
    assert page.inner_text("#completion-code") == "C0DE42"
    with page.expect_navigation():
        page.click("#revise-after a.back")
    page.wait_for_selector("#revising")
    assert item_id(page) == last and page.is_checked("input[value=positive]")
    screenshot(page, "crowd-revise-after-completion")
    answer_by_keys(page, "2")  # negative, Enter saves and goes back to the code
    assert page.inner_text("#completion-code") == "C0DE42"
    assert Annotation.objects.get(item_id=last).value == "negative"
    assert Annotation.objects.get(item_id=first).value == "positive"
    assert list(AnnotationRevision.objects.filter(annotation__item_id=last).values_list("value", flat=True)) == [
        "positive"]
    assert not page.page_errors
