"""An annotator reading a batch through the API sees their own seat, never the other annotators' ids."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.loop_data import batch_of

pytestmark = pytest.mark.django_db


def as_user(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_an_annotator_sees_only_their_own_seat_in_a_batch(alice, bob, dave) -> None:
    batch = batch_of("sts", [alice, bob])
    detail = as_user(alice.user).get(f"/api/v1/batches/{batch.pk}/").json()
    assert detail["assignees"] == [alice.pk]
    listed = as_user(alice.user).get("/api/v1/batches/").json()["results"]
    assert [b["assignees"] for b in listed] == [[alice.pk]]
    assert sorted(as_user(dave).get(f"/api/v1/batches/{batch.pk}/").json()["assignees"]) == sorted([alice.pk, bob.pk])
