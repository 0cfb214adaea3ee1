"""The researcher's study page in Chromium (issue 35, item 7): at a laptop's 1366 px and at 1600 px the
participants table stays inside its card, as an admin sees it (platform ids and the exclude forms) with
participants in every state. Measured by bounding boxes; screenshots go to artifacts/screenshots/ (gitignored)."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.core.cache import caches
from playwright.sync_api import Page

from annotation.crowd.participants import exclude_annotator
from tests.crowd_helpers import Person, make_crowd_task, make_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1366, 1600)
MEASURE = """() => {
  const table = document.querySelector('#participants');
  const card = table.closest('.card');
  const box = table.getBoundingClientRect(), inside = card.getBoundingClientRect();
  return {table_right: box.right, card_right: inside.right, table_width: table.scrollWidth,
          card_scroll: card.scrollWidth - card.clientWidth, page_scroll: document.documentElement.scrollWidth
          - window.innerWidth, shown_width: table.parentElement.clientWidth};
}"""


@pytest.fixture(autouse=True)
def many_arrivals(settings):
    settings.CROWD_ARRIVALS_PER_MINUTE = 10_000
    caches[settings.THROTTLE_CACHE].delete("crowd-arrivals:127.0.0.1")


def study_with_participants():
    """Quota 4 with an attention check, hidden gold and speed checks: one participant completed, one excluded
    with a long reason, one at work, one who declined."""
    link = make_study(make_crowd_task("A study with a rather long batch name", n=12), consent="I agree.",
                      quota=4, gold_rate=0.5, min_seconds=2, straightline_run=2)
    for n, answers in ((1, 7), (2, 3), (3, 2)):
        person = Person(link, n)
        person.start()
        for _ in range(answers):
            if person.item_on_screen() is None:
                break
            person.answer("negative")
    exclude_annotator(Person(link, 2).participant.annotator,
                      "answered every item in under a second and failed the attention check twice")
    declined = Person(link, 4)
    declined.arrive()
    declined.post(action="decline")
    return link


def test_the_participants_table_stays_inside_its_card_at_1366_and_1600_px(
        carol, logged_in_page: Callable[..., Page], live_server, screenshot) -> None:
    link = study_with_participants()
    page = logged_in_page("carol")
    found = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        response = page.goto(f"{live_server.url}/manage/studies/{link.pk}/")
        assert response is not None and response.status == 200
        assert page.locator("#participants tbody tr").count() == 4
        measured = page.evaluate(MEASURE)
        screenshot(page, f"study-participants-{width}")
        found[width] = measured
    for width, measured in found.items():
        assert measured["table_right"] <= measured["card_right"], (width, measured)
        assert measured["card_scroll"] <= 1 and measured["page_scroll"] <= 0, (width, measured)
        # the whole table is shown, not scrolled inside a narrower box
        assert measured["table_width"] <= measured["shown_width"] + 1, (width, measured)
