"""Dataset text is untrusted and multilingual: it renders as literal text, in its own direction."""
from __future__ import annotations

import pytest

from tests.browser.helpers import open_batch
from tests.loop_data import add_items, make_batch, make_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ARABIC = "كان الفيلم رائعاً والتمثيل مقنعاً جداً"
HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script> & "quotes"'


def test_arabic_text_reads_right_to_left_and_english_left_to_right(logged_in_page, live_server, bob, screenshot):
    task = make_task("classification", name="Arabic sentiment", language="ara-Arab", labels=["إيجابي", "سلبي"])
    items = add_items(task, [{"id": "a1", "text": ARABIC, "label": "إيجابي"}])
    batch = make_batch(task, [bob], items)
    page = logged_in_page("bob")
    open_batch(page, live_server.url, batch)
    direction = "sel => getComputedStyle(document.querySelector(sel)).direction"
    assert page.evaluate(direction, ".item-text") == "rtl"
    assert page.evaluate(direction, ".choice .btn [dir=auto]") == "rtl"
    assert page.evaluate(direction, ".loop-head") == "ltr"
    assert page.inner_text(".item-text") == ARABIC
    screenshot(page, "arabic_classification")


def test_an_html_payload_is_shown_literally_and_never_runs(logged_in_page, live_server, alice, screenshot):
    task = make_task("pairwise", name="hostile", instructions=f"Careful {HOSTILE}\n\n<script>window.__pwned=3</script>")
    items = add_items(task, [{"id": "h1", "context": HOSTILE, "a": HOSTILE, "b": "<b>bold?</b>", "preferred": "a"}])
    batch = make_batch(task, [alice], items)
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    page.wait_for_timeout(300)  # give an injected onerror handler time to fire, if there were one
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.inner_text(".context .text-box") == HOSTILE
    assert page.inner_text(".pair > div:last-child .text-box") == "<b>bold?</b>"
    assert page.query_selector("#answer-form img") is None and page.query_selector("#loop script") is None
    assert "onerror" not in page.inner_html(".instructions .md")  # instructions keep only safe markup
    screenshot(page, "hostile_payload")
    page.keyboard.press("a")  # answering swaps the next fragment in via htmx: still nothing runs
    page.keyboard.press("Enter")
    page.wait_for_selector(".item.done")
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
