"""Issue 36: a participant's submit is one request. With JavaScript the item page's form posts through htmx
(annotation/core/item_page.py) and the reply is the run's next page (the next item, or the completion page), with
the URL kept on the tab's run page; a plain form post still gets the redirect to it, as before."""
from __future__ import annotations

import re

import pytest

from annotation.models import Annotation
from tests.crowd_helpers import Person, make_crowd_task, make_study

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def _item_of(html: str) -> int | None:
    found = re.search(r'name="item" value="(\d+)"', html)
    return int(found.group(1)) if found else None


def _working(**link) -> Person:
    person = Person(make_study(make_crowd_task(attention=0, practice=0), consent="", **link), 1)
    person.arrive()
    person.post(action="instructions")
    return person


def test_an_htmx_answer_comes_back_with_the_next_item_in_the_same_response() -> None:
    person = _working(quota=3)
    run = f"/study/{person.link.token}/run/"
    first = person.item_on_screen()
    reply = person.client.post(run, {"tab": person.tab, "action": "answer", "item": first, "label": "positive",
                                     "shown": ""}, **HTMX)
    assert reply.status_code == 200
    html = reply.content.decode()
    second = _item_of(html)
    assert second is not None and second != first
    assert 'id="loop"' in html and "Item 2 of 3" in html
    assert reply["HX-Replace-Url"] == f"{run}?tab={person.tab}" and "HX-Request" in reply["Vary"]
    assert list(Annotation.objects.filter(annotator=person.participant.annotator).values_list("item_id", "value")) \
        == [(first, "positive")]
    assert person.item_on_screen() == second  # the page the reply showed is the one the run holds


def test_the_last_htmx_answer_comes_back_with_the_completion_code() -> None:
    person = _working(quota=2)
    run = f"/study/{person.link.token}/run/"
    for label in ("positive", "negative"):
        reply = person.client.post(run, {"tab": person.tab, "action": "answer", "item": person.item_on_screen(),
                                         "label": label}, **HTMX)
    assert reply.status_code == 200
    assert '<strong id="completion-code">C0DE42</strong>' in reply.content.decode()
    assert Annotation.objects.filter(annotator=person.participant.annotator).count() == 2


def test_an_htmx_skip_comes_back_with_the_next_item_and_a_plain_post_still_redirects() -> None:
    person = _working(quota=3)
    run = f"/study/{person.link.token}/run/"
    first = person.item_on_screen()
    reply = person.client.post(run, {"tab": person.tab, "side": "skip", "item": first,
                                     "skip_reason": "unsure"}, **HTMX)
    assert reply.status_code == 200
    second = _item_of(reply.content.decode())
    assert second not in (None, first)
    plain = person.client.post(run, {"tab": person.tab, "action": "answer", "item": second, "label": "positive"})
    assert plain.status_code == 302 and plain["Location"] == f"{run}?tab={person.tab}"


def test_an_htmx_answer_from_another_tab_gets_the_other_tab_page_and_stores_nothing() -> None:
    person = _working(quota=3)
    run = f"/study/{person.link.token}/run/"
    reply = person.client.post(run, {"tab": "not-this-tab", "action": "answer", "item": person.item_on_screen(),
                                     "label": "positive"}, **HTMX)
    assert reply.status_code == 409 and 'id="study-other-tab"' in reply.content.decode()
    assert not Annotation.objects.filter(annotator=person.participant.annotator).exists()
