"""Nothing on screen is lost on a reload, a stale draft never beats a stored answer, a double submit stores once."""
from __future__ import annotations

import json

import pytest

from annotation.models import Annotation
from tests.browser.helpers import enter_and_wait, item_on_screen, open_batch, stored
from tests.loop_data import batch_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_reload_mid_item_brings_back_the_draft(logged_in_page, live_server, alice):
    batch = batch_of("reranking", [alice])
    page = logged_in_page("alice")
    item = open_batch(page, live_server.url, batch)
    page.keyboard.press("1")
    page.keyboard.press("2")
    page.keyboard.press("2")
    page.reload()
    assert item_on_screen(page) == item  # the hold keeps the same item
    assert page.is_checked("input[name=c0][value='1']") and page.is_checked("input[name=c1][value='0']")
    assert page.inner_text(".form-status") == "Your unsent answer was restored."


def test_an_sts_draft_restores_the_slider_and_the_number(logged_in_page, live_server, alice):
    batch = batch_of("sts", [alice])
    page = logged_in_page("alice")
    open_batch(page, live_server.url, batch)
    page.keyboard.press("4")
    page.reload()
    page.wait_for_selector("#answer-form")
    assert page.input_value("#id_score") == "4"
    assert page.input_value("[data-slider]") == "4"
    assert "untouched" not in (page.get_attribute("[data-slider]", "class") or "")


def test_a_submitted_answer_beats_a_stale_draft_and_clears_it(logged_in_page, live_server, alice):
    batch = batch_of("classification", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("2")
    enter_and_wait(page)
    key = f"hume:draft:{alice.user.pk}:{batch.pk}:{first}"
    assert page.evaluate("k => localStorage.getItem(k)", key) is None  # cleared on a successful submit
    stale = json.dumps({"saved": 1e15, "fields": [["label", "positive"]]})
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [key, stale])
    page.goto(f"{live_server.url}/annotate/b/{batch.pk}/items/{first}/")
    page.wait_for_selector("#answer-form")
    assert page.is_checked("input[name=label][value=negative]")
    assert not page.is_checked("input[name=label][value=positive]")
    assert page.evaluate("k => localStorage.getItem(k)", key) is None


def test_a_double_submit_stores_one_answer(logged_in_page, live_server, alice):
    batch = batch_of("pairwise", [alice])
    page = logged_in_page("alice")
    first = open_batch(page, live_server.url, batch)
    page.keyboard.press("a")
    form = page.evaluate("() => Object.fromEntries(new FormData(document.getElementById('answer-form')))")
    action = page.get_attribute("#answer-form", "action")
    page.evaluate("() => { const f = document.getElementById('answer-form'); f.requestSubmit(); f.requestSubmit(); }")
    page.wait_for_function("i => document.querySelector('#loop > section').dataset.item !== i", arg=str(first))
    replay = page.request.post(f"{live_server.url}{action}", form=form, max_redirects=0,
                               headers={"X-CSRFToken": form["csrfmiddlewaretoken"], "Referer": live_server.url})
    assert replay.status == 302  # a plain form post, replayed: accepted as the same answer, then redirected
    assert Annotation.objects.filter(annotator=alice, item_id=first).count() == 1
    assert stored(alice, batch)[first] == "a"
