"""The annotator's loop as pages: plain form posts and htmx fragments, skip, flag, back, revise, access."""
from __future__ import annotations

import pytest
from django.core import signing
from django.test import Client

from annotation.models import Annotation, AnnotationRevision
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.loop_data import batch_of

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}


def logged_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)
    return client


def current_item(client: Client, batch) -> int:
    response = client.get(f"/annotate/b/{batch.pk}/", **HTMX)
    assert response.status_code == 200
    return int(response.content.decode().split('data-item="')[1].split('"')[0])


def url(batch, item_id: int, action: str = "") -> str:
    return f"/annotate/b/{batch.pk}/items/{item_id}/" + (f"{action}/" if action else "")


def test_the_annotator_home_lists_open_batches_with_progress(alice):
    batch = batch_of("pairwise", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    client.post(url(batch, item, "answer"), {"choice": "a"})
    for page in ("/annotate/", "/"):
        body = client.get(page).content.decode()
        assert batch.name in body and "1 / 2" in body and "Continue" in body
        assert f'href="/annotate/b/{batch.pk}/"' in body


def test_closed_batches_are_not_listed(alice):
    batch = batch_of("pairwise", [alice])
    batch.is_open = False
    batch.save(update_fields=["is_open"])
    assert "No open batches for you right now." in logged_in("alice").get("/annotate/").content.decode()


def test_the_full_page_carries_instructions_progress_and_the_kinds_form(alice):
    batch = batch_of("reranking", [alice])
    response = logged_in("alice").get(f"/annotate/b/{batch.pk}/")
    body = response.content.decode()
    assert response.status_code == 200 and "<html" in body
    assert "<strong>every</strong>" in body and "<details class=\"instructions\" open>" in body
    assert 'name="c0"' in body and "Mark passages that answer the query." in body
    assert "0 / 2" in body
    assert "script-src 'self'" in response["Content-Security-Policy"]
    assert "HX-Request" in response["Vary"]


def test_an_htmx_request_gets_only_the_fragment(alice):
    batch = batch_of("sts", [alice])
    response = logged_in("alice").get(f"/annotate/b/{batch.pk}/", **HTMX)
    body = response.content.decode()
    assert "<html" not in body and 'id="answer-form"' in body and 'type="range"' in body


def test_instructions_markdown_is_sanitised(alice):
    batch = batch_of("pairwise", [alice], instructions="Hi <script>alert(1)</script> <a href='javascript:x()'>x</a>")
    body = logged_in("alice").get(f"/annotate/b/{batch.pk}/").content.decode()
    assert "<script>alert" not in body and "javascript:" not in body


def test_a_plain_post_stores_the_answer_and_redirects_to_the_next_item(alice):
    batch = batch_of("classification", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    response = client.post(url(batch, item, "answer"), {"label": "neutral"})
    assert response.status_code == 302 and response["Location"] == f"/annotate/b/{batch.pk}/"
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert (annotation.value, annotation.source, annotation.batch_id) == ("neutral", "browser", batch.pk)
    assert current_item(client, batch) != item


def test_an_htmx_post_answers_with_the_next_items_fragment(alice):
    batch = batch_of("classification", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    response = client.post(url(batch, item, "answer"), {"label": "neutral"}, **HTMX)
    body = response.content.decode()
    assert response.status_code == 200 and "<html" not in body
    assert 'data-item="' in body and f'data-item="{item}"' not in body
    assert response["HX-Push-Url"] == f"/annotate/b/{batch.pk}/"


def test_the_last_answer_shows_the_done_page(alice):
    batch = batch_of("likert", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    body = client.post(url(batch, item, "answer"), {"a0": "5", "a1": "4"}, **HTMX).content.decode()
    assert "Nothing left for you in this batch" in body and "1 / 1" in body
    assert Annotation.objects.get(annotator=alice).value == {"overall": 5, "coherence": 4}


def test_an_invalid_answer_is_refused_with_its_reason_and_nothing_is_stored(alice):
    batch = batch_of("graded_relevance", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    response = client.post(url(batch, item, "answer"), {"d0": "11", "d1": "3"}, **HTMX)
    assert response.status_code == 422
    body = response.content.decode()
    assert "11 is outside the scale 0–10" in body and 'value="3"' in body  # what was typed stays
    assert not Annotation.objects.exists()


def test_time_on_the_item_is_measured_from_when_the_server_showed_it(alice):
    batch = batch_of("pairwise", [alice])
    client = logged_in("alice")
    body = client.get(f"/annotate/b/{batch.pk}/", **HTMX).content.decode()
    item = int(body.split('data-item="')[1].split('"')[0])
    shown = body.split('name="shown" value="')[1].split('"')[0]
    batch_id, item_id, shown_ms = signing.loads(shown, salt="annotation.item-shown")
    assert (batch_id, item_id) == (batch.pk, item)
    client.post(url(batch, item, "answer"), {"choice": "b", "shown": shown})
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert annotation.time_spent_ms is not None and 0 <= annotation.time_spent_ms < 60_000
    assert abs(annotation.started_at.timestamp() * 1000 - shown_ms) < 1000


def test_a_forged_shown_time_is_ignored(alice):
    batch = batch_of("pairwise", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    client.post(url(batch, item, "answer"), {"choice": "b", "shown": "[1, 2, 0]:forged"})
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert annotation.time_spent_ms is None or annotation.time_spent_ms < 3_600_000


def test_skip_needs_a_reason_and_then_moves_on(alice):
    batch = batch_of("sts", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    response = client.post(url(batch, item, "skip"), {"skip_reason": ""}, **HTMX)
    assert response.status_code == 422 and "Choose why you skip." in response.content.decode()
    client.post(url(batch, item, "skip"), {"skip_reason": "language", "skip_note": "slang"})
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert annotation.skipped and annotation.value is None
    assert annotation.skip_reason == "Outside my language skills: slang"
    assert current_item(client, batch) != item


def test_a_flag_ticked_next_to_an_answer_is_stored_with_it(alice):
    batch = batch_of("pairwise", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    client.post(url(batch, item, "answer"), {"choice": "tie", "flag_tags": ["ambiguous"], "flag_comment": "both ok"})
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert (annotation.value, annotation.flagged, annotation.flag_comment) == ("tie", True, "ambiguous; both ok")


def test_flagging_without_answering_needs_a_comment_and_leaves_the_item(alice):
    batch = batch_of("pairwise", [alice])
    client = logged_in("alice")
    item = current_item(client, batch)
    assert client.post(url(batch, item, "flag"), {}, **HTMX).status_code == 422
    client.post(url(batch, item, "flag"), {"flag_tags": ["broken text"]})
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert annotation.flagged and annotation.flag_comment == "broken text" and annotation.skipped
    assert current_item(client, batch) != item


def test_back_opens_the_previous_answer_for_revision_and_keeps_the_old_value(alice):
    batch = batch_of("classification", [alice])
    client = logged_in("alice")
    first = current_item(client, batch)
    client.post(url(batch, first, "answer"), {"label": "positive"})
    second = current_item(client, batch)
    response = client.get(url(batch, second, "back"))
    assert response.status_code == 302 and response["Location"] == url(batch, first)
    body = client.get(url(batch, first)).content.decode()
    assert "You answered this item already" in body and 'value="positive" required checked' in body
    assert "data-answered" in body
    assert f'<a class="forward" href="/annotate/b/{batch.pk}/">Current item →</a>' in body  # issue 28: a way back
    assert current_item(client, batch) == second  # where that link leads
    client.post(url(batch, first, "answer"), {"label": "negative"})
    annotation = Annotation.objects.get(annotator=alice, item_id=first)
    assert annotation.value == "negative"
    revisions = AnnotationRevision.objects.filter(annotation=annotation)
    assert list(revisions.values_list("value", flat=True)) == ["positive"]
    assert current_item(client, batch) == second  # the item on screen before going back is still there


def test_back_by_htmx_swaps_in_the_previous_item_and_pushes_its_url(alice):
    batch = batch_of("classification", [alice])
    client = logged_in("alice")
    first = current_item(client, batch)
    client.post(url(batch, first, "answer"), {"label": "positive"})
    second = current_item(client, batch)
    response = client.get(url(batch, second, "back"), **HTMX)
    assert f'data-item="{first}"' in response.content.decode()
    assert response["HX-Push-Url"] == url(batch, first)


def test_another_annotators_batch_is_not_found(alice, bob):
    batch = batch_of("classification", [alice])
    client = logged_in("bob")
    assert client.get(f"/annotate/b/{batch.pk}/").status_code == 404
    item = batch.batch_items.first().item_id
    assert client.post(url(batch, item, "answer"), {"label": "positive"}).status_code == 404
    assert not Annotation.objects.exists()


def test_an_item_outside_the_batch_or_never_given_cannot_be_opened(alice):
    batch = batch_of("classification", [alice])
    other = batch_of("pairwise", [alice])
    client = logged_in("alice")
    foreign = other.batch_items.first().item_id
    assert client.get(url(batch, foreign)).status_code == 404
    current = current_item(client, batch)
    never_given = batch.batch_items.exclude(item_id=current).first().item_id
    response = client.get(url(batch, never_given))
    assert response.status_code == 302 and response["Location"] == f"/annotate/b/{batch.pk}/"


def test_a_closed_batch_says_so(alice):
    batch = batch_of("classification", [alice])
    batch.is_open = False
    batch.save(update_fields=["is_open"])
    response = logged_in("alice").get(f"/annotate/b/{batch.pk}/")
    assert response.status_code == 409 and "This batch is closed" in response.content.decode()


def test_people_without_an_annotator_profile_have_nothing_to_annotate(carol):
    assert logged_in("carol").get("/annotate/").status_code == 403


def test_the_sts_keyboard_help_names_the_scales_own_digits(alice):
    """Issue 28: the help said 0–9 on a 0–5 scale (digits above the scale do nothing)."""
    batch = batch_of("sts", [alice])  # scale 0–5, step 0.5
    body = logged_in("alice").get(f"/annotate/b/{batch.pk}/").content.decode()
    assert "<dt><kbd>0</kbd>–<kbd>5</kbd></dt><dd>set the score (the scale is 0–5)</dd>" in body
    assert "<kbd>9</kbd>" not in body
