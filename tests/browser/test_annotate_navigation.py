"""Back to revise, skip and flag in the browser, through htmx swaps; a lost connection loses nothing."""
from __future__ import annotations

import pytest

from annotation.models import Annotation
from tests.browser.helpers import enter_and_wait, item_on_screen, open_batch, stored
from tests.loop_data import batch_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_back_revises_the_previous_answer_and_returns_to_the_current_item(logged_in_page, live_server, alice):
    batch = batch_of("classification", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("1")
    second = enter_and_wait(page)
    page.click("a.back")
    page.wait_for_selector(f'#loop > section[data-item="{first}"]')
    assert page.url.endswith(f"/annotate/b/{batch.pk}/items/{first}/")
    assert page.is_checked("input[name=label][value=positive]")
    page.keyboard.press("2")
    assert enter_and_wait(page) == second
    assert Annotation.objects.get(annotator=alice, item_id=first).value == "negative"
    assert Annotation.objects.get(annotator=alice, item_id=first).revisions.count() == 1


def test_skip_with_a_reason_and_flag_and_skip(logged_in_page, live_server, alice):
    batch = batch_of("pairwise", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.click("summary:has-text('Skip')")
    page.select_option("#id_skip_reason", "language")
    page.fill("input[name=skip_note]", "regional slang")
    page.keyboard.press("Enter")  # Enter in the skip box sends the skip, not an answer
    page.wait_for_function("i => document.querySelector('#loop > section').dataset.item !== i", arg=str(first))
    second = item_on_screen(page)
    page.click("summary:has-text('Flag a problem')")
    page.check("input[name=flag_tags][value=ambiguous]")
    page.click("button:has-text('Flag and skip')")
    page.wait_for_selector(".item.done")
    skipped = Annotation.objects.get(annotator=alice, item_id=first)
    assert skipped.skipped and skipped.skip_reason == "Outside my language skills: regional slang"
    flagged = Annotation.objects.get(annotator=alice, item_id=second)
    assert flagged.flagged and flagged.flag_comment == "ambiguous" and flagged.skipped


def test_a_submit_without_connection_keeps_the_answer_and_succeeds_later(logged_in_page, live_server, alice):
    batch = batch_of("likert", [alice])
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    page.keyboard.press("5")
    page.keyboard.press("2")
    page.context.set_offline(True)
    page.keyboard.press("Enter")
    page.wait_for_selector("#net-status:not([hidden])")
    assert "Not saved" in page.inner_text("#net-status")
    assert page.is_checked("input[name=a0][value='5']") and page.is_checked("input[name=a1][value='2']")
    assert stored(alice, batch) == {}
    page.context.set_offline(False)
    page.keyboard.press("Enter")
    page.wait_for_selector(".item.done")
    assert list(stored(alice, batch).values()) == [{"overall": 5, "coherence": 2}]
    assert page.is_hidden("#net-status")
