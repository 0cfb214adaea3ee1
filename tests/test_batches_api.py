"""Batches through the API and the admin pages: create (with the preset), the language rule, close, bulk."""
from __future__ import annotations

import pytest
from django.test import Client

from annotation.core import assignment as engine
from annotation.core.assignment import AssignmentRefused
from annotation.models import Batch, BatchAssignee, BatchItem

from .batch_helpers import fast_password_hashing, make_task  # noqa: F401


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def post(client: Client, url: str, data: dict):
    return client.post(url, data, content_type="application/json")


def test_an_admin_creates_a_batch_with_the_hume_preset(carol, alice):
    task = make_task(n=3)
    response = post(client_for(carol), "/api/v1/batches/", {"task": task.pk, "preset": "hume",
                                                            "annotators": [alice.pk], "due_date": "2027-01-31"})
    assert response.status_code == 201
    body = response.json()
    assert (body["name"], body["language"], body["overlap"], body["is_open"], body["assignees"], body["due_date"],
            body["created_by"]) == ("SentimentEng · eng-Latn", "eng-Latn", 2, True, [alice.pk], "2027-01-31", "carol")
    assert BatchItem.objects.filter(batch_id=body["id"]).count() == 3


def test_the_api_refuses_an_annotator_without_the_language_and_accepts_an_override(carol, bob):
    task = make_task(n=1)
    admin = client_for(carol)
    refused = post(admin, "/api/v1/batches/", {"task": task.pk, "overlap": 1, "annotators": [bob.pk]})
    assert refused.status_code == 400
    assert "bob" in refused.json()["annotators"][0]
    assert not Batch.objects.exists()
    accepted = post(admin, "/api/v1/batches/", {"task": task.pk, "overlap": 1, "annotators": [bob.pk],
                                                "override_reason": "reads English"})
    assert accepted.status_code == 201
    assert BatchAssignee.objects.get().override_reason == "reads English"


def test_the_old_field_name_lease_seconds_is_still_read_as_hold_seconds(carol):
    task = make_task(n=1)
    admin = client_for(carol)
    created = post(admin, "/api/v1/batches/", {"task": task.pk, "overlap": 1, "lease_seconds": 120})
    assert created.status_code == 201
    body = created.json()
    assert (body["hold_seconds"], "lease_seconds" in body) == (120, False)
    patched = admin.patch(f"/api/v1/batches/{body['id']}/", {"lease_seconds": 60}, content_type="application/json")
    assert (patched.status_code, patched.json()["hold_seconds"], Batch.objects.get().hold_seconds) == (200, 60, 60)
    both = admin.patch(f"/api/v1/batches/{body['id']}/", {"lease_seconds": 30, "hold_seconds": 90},
                       content_type="application/json")
    assert both.status_code == 400
    assert both.json()["hold_seconds"] == ["says 90 but the old field 'lease_seconds' says 30"]
    assert Batch.objects.get().hold_seconds == 60


def test_closing_a_batch_through_the_api_stops_the_engine(carol, alice):
    task = make_task(n=1)
    batch_id = post(client_for(carol), "/api/v1/batches/", {"task": task.pk, "annotators": [alice.pk]}).json()["id"]
    item = engine.next_item(alice, Batch.objects.get(pk=batch_id))
    patched = client_for(carol).patch(f"/api/v1/batches/{batch_id}/", {"is_open": False},
                                      content_type="application/json")
    assert patched.json()["is_open"] is False
    with pytest.raises(AssignmentRefused, match="closed"):
        engine.submit_answer(alice, Batch.objects.get(pk=batch_id), item, "positive")


def test_adding_assignees_through_the_api_follows_the_language_rule(carol, alice, bob):
    task = make_task(n=1)
    batch_id = post(client_for(carol), "/api/v1/batches/", {"task": task.pk}).json()["id"]
    added = post(client_for(carol), f"/api/v1/batches/{batch_id}/assignees/", {"annotators": [alice.pk]})
    refused = post(client_for(carol), f"/api/v1/batches/{batch_id}/assignees/", {"annotators": [bob.pk]})
    assert [s["annotator_name"] for s in added.json()] == ["alice"]
    assert refused.status_code == 400


def test_bulk_creation_through_the_api_makes_one_batch_per_language(carol, alice, bob):
    for language in ("eng-Latn", "ara-Arab"):
        make_task(name=f"MassiveIntent {language}", n=2, language=language, mteb="MassiveIntentClassification")
    response = post(client_for(carol), "/api/v1/batches/bulk/", {"mteb_task_name": "MassiveIntentClassification"})
    assert response.status_code == 201
    assert sorted((b["language"], b["overlap"], b["assignees"], b["created"]) for b in response.json()) == [
        ("ara-Arab", 1, [bob.pk], True), ("eng-Latn", 2, [alice.pk], True)]
    again = post(client_for(carol), "/api/v1/batches/bulk/", {"mteb_task_name": "MassiveIntentClassification"})
    assert (again.status_code, [b["created"] for b in again.json()]) == (200, [False, False])


def test_batches_are_closed_not_deleted(carol):
    batch_id = post(client_for(carol), "/api/v1/batches/", {"task": make_task(n=1).pk}).json()["id"]
    assert client_for(carol).delete(f"/api/v1/batches/{batch_id}/").status_code == 405
    assert Batch.objects.filter(pk=batch_id).exists()


def test_an_admin_creates_a_batch_on_the_page(carol, alice, bob):
    task = make_task(n=2)
    admin = client_for(carol)
    form = {"task": task.pk, "language": "", "overlap": "", "hold_minutes": "10", "annotators": [alice.pk, bob.pk]}
    refused = admin.post("/manage/batches/new/", form)
    assert refused.status_code == 200 and "give an override reason" in refused.content.decode()
    created = admin.post("/manage/batches/new/", {**form, "override_reason": "bob is bilingual"})
    batch = Batch.objects.get()
    assert created["Location"] == f"/manage/batches/{batch.pk}/"
    assert (batch.overlap, batch.hold_seconds, batch.language) == (2, 600, "eng-Latn")


def test_an_admin_creates_batches_per_language_on_the_page(carol, alice, bob):
    tasks = [make_task(name=f"T {lang}", n=1, language=lang) for lang in ("eng-Latn", "dan-Latn", "ara-Arab")]
    response = client_for(carol).post("/manage/batches/bulk/", {"tasks": [t.pk for t in tasks[:2]],
                                                                 "assign_speakers": "on", "hold_minutes": "15"})
    assert response.status_code == 302
    assert sorted(Batch.objects.values_list("language", "overlap")) == [("dan-Latn", 1), ("eng-Latn", 2)]


def test_an_admin_closes_edits_and_reassigns_on_the_page(carol, alice):
    task = make_task(n=1)
    batch_id = post(client_for(carol), "/api/v1/batches/", {"task": task.pk, "annotators": [alice.pk]}).json()["id"]
    admin = client_for(carol)
    admin.post(f"/manage/batches/{batch_id}/edit/", {"name": "renamed", "overlap": "3", "hold_minutes": "5"})
    admin.post(f"/manage/batches/{batch_id}/open/", {"open": "0"})
    seat = BatchAssignee.objects.get()
    admin.post(f"/manage/assignments/{seat.pk}/remove/")
    batch = Batch.objects.get()
    assert (batch.name, batch.overlap, batch.hold_seconds, batch.is_open) == ("renamed", 3, 300, False)
    assert not BatchAssignee.objects.exists()
