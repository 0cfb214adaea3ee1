"""Loop-wide keyboard shortcuts: p goes back, s and f open the skip and flag boxes (Enter sends them), ? lists
every key of the page (issue 14, item 12)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation
from tests.browser.helpers import enter_and_wait, open_batch
from tests.loop_data import batch_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_question_mark_lists_the_keys_and_escape_closes_it(logged_in_page, live_server, alice, screenshot):
    batch = batch_of("pairwise", [alice])
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    help_box = page.locator("#keys-help")
    expect(help_box).to_be_hidden()
    page.keyboard.press("?")
    expect(help_box).to_be_visible()
    for text in ("A is better, tie, B is better", "previous item", "skip", "flag", "submit the answer"):
        expect(help_box).to_contain_text(text)
    screenshot(page, "keys-help")
    page.keyboard.press("a")  # answer keys do nothing while the list is open
    assert not page.is_checked("input[name=choice][value=a]")
    page.keyboard.press("Escape")
    expect(help_box).to_be_hidden()


def test_p_goes_back_and_s_skips_and_f_flags_from_the_keyboard(logged_in_page, live_server, alice):
    batch = batch_of("pairwise", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("a")
    second = enter_and_wait(page)
    assert second not in (None, first)
    page.keyboard.press("p")  # back to the answered item
    page.wait_for_function("id => document.querySelector('#loop > section').dataset.item == id", arg=str(first))
    assert page.is_checked("input[name=choice][value=a]")
    page.keyboard.press("b")
    assert enter_and_wait(page) == second  # the revision is saved, on to the second item again
    page.keyboard.press("f")
    expect(page.locator("#loop [name=flag_tags]").first).to_be_focused()
    page.evaluate("document.activeElement.blur()")
    page.keyboard.press("s")
    expect(page.locator("#id_skip_reason")).to_be_focused()
    page.select_option("#id_skip_reason", index=1)
    page.keyboard.press("Enter")
    page.wait_for_selector(".item.done")
    skipped = Annotation.objects.get(annotator=alice, item_id=second)
    assert skipped.skipped and Annotation.objects.get(annotator=alice, item_id=first).value == "b"
