"""Every kind's form on a laptop and on a phone: nothing spills sideways, long texts scroll in their box.
The screenshots land in artifacts/screenshots/ for a person to look at."""
from __future__ import annotations

import pytest

from tasks_app.core.kinds import KINDS
from tests.browser.conftest import LAPTOP, PHONE
from tests.browser.helpers import open_batch
from tests.loop_data import add_items, batch_of, make_batch, make_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_kind_fits_a_phone_and_a_laptop(kind, logged_in_page, live_server, alice, screenshot):
    batch = batch_of(kind, [alice])
    page = logged_in_page("alice")
    for name, size in (("phone", PHONE), ("laptop", LAPTOP)):
        page.set_viewport_size(size)
        open_batch(page, live_server.url, batch)
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{kind} on a {name} is {overflow}px wider than the screen"
        assert page.is_visible("button.primary[type=submit]")
        screenshot(page, f"{kind}_{name}")


def test_a_long_text_scrolls_inside_its_box(logged_in_page, live_server, alice, screenshot):
    task = make_task("classification", name="long texts")
    long_text = " ".join(f"Sentence number {i} of a very long review." for i in range(400))
    batch = make_batch(task, [alice], add_items(task, [{"id": "long", "text": long_text}]))
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    box = page.evaluate("() => { const b = document.querySelector('.item-text'); "
                        "return [b.scrollHeight, b.clientHeight, getComputedStyle(b).overflowY]; }")
    assert box[0] > box[1] and box[2] == "auto"
    submit = page.locator("button.primary[type=submit]").bounding_box()
    assert submit["y"] + submit["height"] <= LAPTOP["height"]  # the labels and submit stay on screen
    screenshot(page, "long_text", full_page=False)


def test_the_home_page_shows_each_batch_with_progress_and_continue(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("classification", [alice])
    batch_of("sts", [alice])
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    page.wait_for_selector(".loop-head .count:has-text('1 / 2')")
    page.goto(f"{live_server.url}/")
    row = page.locator(".batch-row", has_text="classification task")
    assert row.locator("progress").get_attribute("value") == "1"
    assert row.locator(".count").inner_text() == "1 / 2"
    row.locator("a:has-text('Continue')").click()
    page.wait_for_selector("#answer-form")
    assert page.url.endswith(f"/annotate/b/{batch.pk}/")
    page.goto(f"{live_server.url}/")
    screenshot(page, "home")
