"""Gold never reaches an annotator: not in a page, not in an htmx fragment, not in the API.

Each kind's items carry gold values that appear nowhere else (a label outside the label set, cluster names
no one types, numbers with digits no answer has, a marker key), so finding one of them in any response an
annotator receives can only mean the gold table leaked. The values and the answers are each kind's own (its
samples.py `telltale_gold`, `valid_answer`, `form_data`).
"""
from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tasks_app.core.kinds import KINDS
from tasks_app.models import ItemGold
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.conftest import PASSWORD
from tests.kind_samples import SAMPLES, SampleTable
from tests.loop_data import RECORDS, add_items, make_batch, make_task

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true"}

GOLD = SampleTable("telltale_gold")  # kind: (gold value stored for every item, strings that betray it)


def api_value(kind: str, payload: dict[str, Any]) -> Any:
    return SAMPLES[kind].valid_answer(payload)


def form_data(kind: str, payload: dict[str, Any]) -> dict[str, str]:
    return SAMPLES[kind].form_data(payload)


def setup_batch(kind: str, alice):
    task = make_task(kind)
    records = RECORDS[kind] * 2 if len(RECORDS[kind]) == 1 else RECORDS[kind]
    records = [{**r, "id": f"{r['id']}-{i}"} for i, r in enumerate(records)]
    items = add_items(task, records, gold=[GOLD[kind][0]] * len(records))
    return make_batch(task, [alice], items)


def browser_responses(batch, kind: str) -> list[tuple[str, bytes]]:
    client = Client()
    client.login(username="alice", password=PASSWORD)
    seen = [("home", client.get("/").content), ("annotate home", client.get("/annotate/").content)]
    page = client.get(f"/annotate/b/{batch.pk}/")
    seen += [("page", page.content), ("fragment", client.get(f"/annotate/b/{batch.pk}/", **HTMX).content)]
    item_id = int(page.content.decode().split('data-item="')[1].split('"')[0])
    payload = batch.batch_items.get(item_id=item_id).item.payload
    base = f"/annotate/b/{batch.pk}/items/{item_id}/"
    seen.append(("invalid post", client.post(base + "answer/", {}, **HTMX).content))
    seen.append(("answer", client.post(base + "answer/", form_data(kind, payload), **HTMX).content))
    seen.append(("revise page", client.get(base).content))
    seen.append(("revise fragment", client.get(base, **HTMX).content))
    following = client.post(base + "answer/", form_data(kind, payload), follow=True)
    seen.append(("plain post, followed", following.content))
    second = int(following.content.decode().split('data-item="')[1].split('"')[0])
    seen.append(("back", client.get(f"/annotate/b/{batch.pk}/items/{second}/back/", follow=True).content))
    seen.append(("skip", client.post(f"/annotate/b/{batch.pk}/items/{second}/skip/", {"skip_reason": "unsure"},
                                     **HTMX).content))
    return seen


def api_responses(batch, kind: str, alice) -> list[tuple[str, bytes]]:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=alice.user)[0].key}")
    seen = [("my batches", client.get("/api/v1/my/batches/").content)]
    nxt = client.get(f"/api/v1/batches/{batch.pk}/next/")
    seen.append(("next", nxt.content))
    data = nxt.json()
    value = api_value(kind, data["item"]["payload"])
    answered = client.post(data["answer_url"], {"value": value}, format="json")
    seen += [("answer", answered.content), ("replay", client.post(data["answer_url"], {"value": value},
                                                                  format="json").content)]
    annotation = f"/api/v1/annotations/{answered.json()['annotation']['id']}/"
    seen += [("annotation", client.get(annotation).content),
             ("revision", client.patch(annotation, {"value": value}, format="json").content),
             ("schema", client.get("/api/schema/").content)]
    return seen


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_annotator_never_receives_gold_in_pages_or_fragments(kind, alice):
    batch = setup_batch(kind, alice)
    for name, body in browser_responses(batch, kind):
        for needle in GOLD[kind][1]:
            assert needle.encode() not in body, f"{kind}: gold {needle!r} in the {name} response"


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_annotator_never_receives_gold_from_the_api(kind, alice):
    batch = setup_batch(kind, alice)
    for name, body in api_responses(batch, kind, alice):
        for needle in GOLD[kind][1]:
            assert needle.encode() not in body, f"{kind}: gold {needle!r} in the API {name} response"


def test_the_gold_values_are_really_stored(alice):
    """Guards the test itself: the needles are in the gold table, so their absence above means something."""
    for kind in KINDS:
        setup_batch(kind, alice)
    stored = str(list(ItemGold.objects.values_list("value", flat=True)))
    for _, needles in GOLD.values():
        assert all(needle in stored for needle in needles)
