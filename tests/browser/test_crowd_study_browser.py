"""A crowd study in Chromium (issue 26, "Done when"): a Prolific-style arrival to the completion code with the
keyboard, a timed-out participant whose item goes to the next one, a resumed participant, and an Arabic study
shown right to left."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.core.cache import caches
from django.utils import timezone
from playwright.sync_api import Browser, BrowserContext, Page

from annotation.crowd.models import CheckResult, Participant
from annotation.models import Annotation
from tests.crowd_helpers import arrival_url, make_crowd_task, make_study, pid

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Pages in contexts of their own (own cookies: another participant's browser), closed after the test."""
    contexts = []

    def make() -> Page:
        contexts.append(browser.new_context(viewport={"width": 1280, "height": 800}))
        return _page_of(contexts[-1])

    yield make
    for context in contexts:
        context.close()


def _page_of(context: BrowserContext) -> Page:
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.page_errors = errors  # type: ignore[attr-defined]
    return page


def item_id(page: Page) -> int:
    return int(page.get_attribute("input[name=item]", "value"))


@contextmanager
def next_page(page: Page) -> Iterator[None]:
    """Wait for the run's next page after a form sent inside the block: the item page's forms post through htmx
    (one request, the next page swapped in; docs/crowd.md, "One item page"), the others navigate."""
    with page.expect_response(lambda response: response.request.method == "POST"):
        yield
    page.wait_for_load_state()
    page.wait_for_function("() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')")


def answer_by_keys(page: Page, key: str) -> None:
    """Choose with a number key, submit with Enter, and wait for the next page."""
    page.wait_for_selector("#answer-form")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press(key)
    with next_page(page):
        page.keyboard.press("Enter")


def test_a_prolific_participant_goes_from_arrival_to_the_completion_code(page, live_server, screenshot):
    link = make_study(quota=3)
    page.goto(live_server.url + arrival_url(link, 1))
    assert page.inner_text("#study-consent strong") == "No personal data"
    page.click("button[value=consent]")
    page.click("button[value=instructions]")
    assert "Practice" in page.inner_text(".loop-head")
    answer_by_keys(page, "1")  # the practice item: 1 = positive
    assert page.inner_text("#study-feedback h1") == "Correct"
    page.click("#continue")
    for _ in range(4):  # three work items and, after the first, the attention check
        answer_by_keys(page, "2" if "Attention" in page.inner_text("#answer-form") else "1")
    screenshot(page, "crowd-complete")
    assert page.inner_text("#completion-code") == "C0DE42"
    assert page.get_attribute("#return-link", "href") == "https://app.prolific.com/submissions/complete?cc=C0DE42"
    participant = Participant.objects.get(platform_id=pid(1))
    assert participant.stage == "completed"
    assert Annotation.objects.filter(annotator=participant.annotator, value="positive").count() == 3
    assert set(CheckResult.objects.values_list("role", "passed")) == {("practice", True), ("attention", True)}


def test_a_timed_out_participants_item_goes_to_the_next_participant(new_page, live_server):
    link = make_study(make_crowd_task(n=2, attention=0, practice=0), consent="", quota=2)
    slow = new_page()
    slow.goto(live_server.url + arrival_url(link, 2))
    slow.click("button[value=instructions]")
    held = item_id(slow)
    Participant.objects.filter(platform_id=pid(2)).update(deadline=timezone.now() - timedelta(seconds=1))
    fast = new_page()
    fast.goto(live_server.url + arrival_url(link, 3))
    fast.click("button[value=instructions]")
    seen = [item_id(fast)]
    answer_by_keys(fast, "1")
    seen.append(item_id(fast))
    answer_by_keys(fast, "2")
    assert fast.inner_text("#completion-code") == "C0DE42" and held in seen
    answer_by_keys(slow, "1")  # the slow participant's late answer
    assert slow.inner_text("#study-returned h1") == "Your time for this study ran out"
    assert not Annotation.objects.filter(annotator__participant__platform_id=pid(2)).exists()
    assert Annotation.objects.filter(item_id=held).count() == 1  # k = 1, exactly
    assert not slow.page_errors and not fast.page_errors


def test_a_participant_who_comes_back_resumes_where_they_left_off(new_page, live_server):
    link = make_study(make_crowd_task(n=4, attention=0, practice=0), consent="", quota=3)
    first = new_page()
    first.goto(live_server.url + arrival_url(link, 4))
    first.click("button[value=instructions]")
    answer_by_keys(first, "1")
    on_screen = item_id(first)
    first.close()  # the tab is closed; a minute later the participant comes back
    Participant.objects.filter(platform_id=pid(4)).update(tab_seen_at=timezone.now() - timedelta(minutes=2))
    elsewhere = new_page()  # another browser with the same id: the run is not its own (issue 35, item 1)
    elsewhere.goto(live_server.url + arrival_url(link, 4))
    assert elsewhere.inner_text("#study-already-started h1") == (
        "This id has already started the study in another browser")
    again = _page_of(first.context)  # the browser that started it, in a new tab
    again.goto(live_server.url + arrival_url(link, 4))
    assert "Item 2 of 3" in again.inner_text(".loop-head") and item_id(again) == on_screen
    second_tab = again.context.new_page()  # a second tab of the same browser gets a clear page
    second_tab.goto(f"{live_server.url}/study/{link.token}/run/")
    assert second_tab.inner_text("#study-other-tab h1") == "This study is open in another tab"
    answer_by_keys(again, "2")
    answer_by_keys(again, "2")
    assert again.inner_text("#completion-code") == "C0DE42"
    assert Participant.objects.filter(link=link).count() == 1
    assert Annotation.objects.filter(annotator__participant__platform_id=pid(4)).count() == 3
    assert not again.page_errors


def test_an_arabic_study_reads_right_to_left(page, live_server, screenshot):
    task = make_crowd_task("CrowdArabic", n=3, language="ara-Arab", attention=0, practice=0)
    task.items.filter(external_id="0").update(payload={"text": "هذا فيلم رائع"})
    link = make_study(task, consent="أوافق على **المشاركة**", quota=1)
    page.goto(live_server.url + arrival_url(link, 5))
    assert page.get_attribute("html", "dir") == "rtl" and page.get_attribute("html", "lang") == "ara"
    assert page.inner_text("#study-consent strong") == "المشاركة"
    page.click("button[value=consent]")
    page.click("button[value=instructions]")
    assert page.evaluate("getComputedStyle(document.querySelector('main')).direction") == "rtl"
    screenshot(page, "crowd-arabic")
    answer_by_keys(page, "1")
    assert page.inner_text("#completion-code") == "C0DE42"
