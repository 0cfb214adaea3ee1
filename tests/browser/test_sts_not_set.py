"""Issue 28: an unmoved STS slider sits in the middle of the scale (2.5 on 0–5), which is not an answer. The page
says "not set" until the slider is moved, and Enter on an unmoved slider stores nothing."""
from __future__ import annotations

import pytest

from tests.browser.helpers import item_on_screen, open_batch, stored
from tests.loop_data import batch_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_unmoved_sts_slider_says_not_set_and_cannot_be_submitted_as_the_midpoint(logged_in_page, live_server,
                                                                                      alice):
    batch = batch_of("sts", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    assert page.is_visible("[data-unset]") and page.inner_text("[data-unset]") == "not set"
    assert page.input_value("#id_score") == "" and page.input_value("[data-slider]") == "2.5"
    page.keyboard.press("Enter")
    page.wait_for_timeout(300)
    assert item_on_screen(page) == first and stored(alice, batch) == {}
    page.keyboard.press("ArrowLeft")  # one step of 0.5 from the middle
    assert page.input_value("#id_score") == "2"
    assert not page.is_visible("[data-unset]")
