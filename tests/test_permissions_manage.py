"""Who reaches what: annotators only their own batches, assignments and answers (someone else's id is 404,
whatever the method, API or page); researchers read everything but never act as an annotator; admins manage."""
from __future__ import annotations

import pytest
from django.test import Client

from annotation.api import ANSWERS_ARE_KEPT
from annotation.core import assignment as engine
from annotation.models import Annotation, AnnotationRevision, BatchAssignee

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def answered(alice, bob):
    """alice answered the first item of an English batch; bob has his own Arabic batch."""
    batch = make_batch(make_task(n=2), [alice])
    answer = engine.submit_answer(alice, batch, engine.next_item(alice, batch), "positive").annotation
    own = make_batch(make_task(name="ArabicSentiment", n=1, language="ara-Arab"), [bob])
    return {"batch": batch, "answer": answer, "seat": BatchAssignee.objects.get(batch=batch, annotator=alice),
            "bob_batch": own}


@pytest.mark.parametrize("method", ["get", "patch", "delete"])
@pytest.mark.parametrize("kind", ["assignments", "annotations", "batches", "annotators"])
def test_another_annotators_objects_are_404_through_the_api(answered, bob, alice, method, kind):
    target = {"assignments": answered["seat"].pk, "annotations": answered["answer"].pk,
              "batches": answered["batch"].pk, "annotators": alice.pk}[kind]
    api = client_for(bob.user)
    response = getattr(api, method)(f"/api/v1/{kind}/{target}/", {"value": "negative"}, content_type="application/json")
    assert response.status_code == 404  # DELETE too: bob cannot tell alice's answer from a missing one
    if kind == "annotations":
        assert api.delete("/api/v1/annotations/999999/").status_code == 404
    assert Annotation.objects.get().value == "positive"
    assert BatchAssignee.objects.filter(pk=answered["seat"].pk).exists()


@pytest.mark.parametrize(("method", "url"), [
    ("get", "/manage/assignments/{seat}/"), ("post", "/manage/assignments/{seat}/remove/"),
    ("get", "/manage/annotations/{answer}/"), ("get", "/manage/batches/{batch}/"),
    ("post", "/manage/batches/{batch}/open/"), ("post", "/manage/batches/{batch}/edit/"),
    ("post", "/manage/batches/{batch}/assignees/"), ("get", "/manage/batches/{batch}/issues.csv"),
])
def test_another_annotators_objects_are_404_on_the_pages(answered, bob, method, url):
    ids = {"seat": answered["seat"].pk, "answer": answered["answer"].pk, "batch": answered["batch"].pk}
    response = getattr(client_for(bob.user), method)(url.format(**ids))
    assert response.status_code == 404
    assert BatchAssignee.objects.filter(pk=answered["seat"].pk).exists()
    answered["batch"].refresh_from_db()
    assert answered["batch"].is_open


def test_list_endpoints_show_an_annotator_only_their_own_objects(answered, alice, bob):
    engine.submit_answer(bob, answered["bob_batch"], engine.next_item(bob, answered["bob_batch"]), "negative")
    api = client_for(bob.user)
    answers = api.get("/api/v1/annotations/").json()["results"]
    seats = api.get("/api/v1/assignments/").json()["results"]
    batches = api.get("/api/v1/batches/").json()["results"]
    assert [(a["annotator_name"], a["value"]) for a in answers] == [("bob", "negative")]
    assert [s["annotator_name"] for s in seats] == ["bob"]
    assert [b["id"] for b in batches] == [answered["bob_batch"].pk]
    assert api.get(f"/api/v1/annotations/?batch={answered['batch'].pk}").json()["results"] == []


def test_an_annotator_revises_their_answer_and_the_list_shows_the_earlier_value(answered, alice):
    api = client_for(alice.user)
    response = api.patch(f"/api/v1/annotations/{answered['answer'].pk}/", {"value": "negative"},
                         content_type="application/json")
    assert response.status_code == 200
    [listed] = api.get(f"/api/v1/annotations/?batch={answered['batch'].pk}").json()["results"]
    assert (listed["value"], [r["value"] for r in listed["revisions"]]) == ("negative", ["positive"])
    page = api.get(f"/manage/annotations/{answered['answer'].pk}/").content.decode()
    assert "Never revised" not in page and "positive" in page


def test_a_revision_with_an_invalid_value_names_the_field_and_changes_nothing(answered, alice):
    response = client_for(alice.user).patch(f"/api/v1/annotations/{answered['answer'].pk}/", {"value": "maybe"},
                                            content_type="application/json")
    assert response.status_code == 400 and "value" in response.json()
    assert (Annotation.objects.get().value, AnnotationRevision.objects.count()) == ("positive", 0)


def test_a_closed_batch_refuses_revisions_through_the_api(answered, alice, carol):
    client_for(carol).patch(f"/api/v1/batches/{answered['batch'].pk}/", {"is_open": False},
                            content_type="application/json")
    response = client_for(alice.user).patch(f"/api/v1/annotations/{answered['answer'].pk}/", {"value": "negative"},
                                            content_type="application/json")
    assert response.status_code == 409
    assert response.json()["code"] == "batch_closed"
    assert Annotation.objects.get().value == "positive"


def test_answers_are_never_deleted_even_by_their_annotator(answered, alice):
    response = client_for(alice.user).delete(f"/api/v1/annotations/{answered['answer'].pk}/")
    assert response.status_code == 405
    assert response.json() == {"detail": ANSWERS_ARE_KEPT, "code": "answers_are_kept"}
    assert "never deleted" in response.json()["detail"] and "PATCH" in response.json()["detail"]
    assert response["Allow"] == "GET, PATCH, OPTIONS"
    assert list(Annotation.objects.values_list("pk", "value")) == [(answered["answer"].pk, "positive")]


def test_a_researcher_reads_every_answer_but_cannot_answer_as_someone_else(answered, dave):
    researcher = client_for(dave)
    url = f"/api/v1/annotations/{answered['answer'].pk}/"
    assert [a["annotator_name"] for a in researcher.get("/api/v1/annotations/").json()["results"]] == ["alice"]
    assert researcher.get(url).json()["value"] == "positive"
    assert researcher.get(f"/manage/annotations/{answered['answer'].pk}/").status_code == 200
    assert researcher.patch(url, {"value": "negative"}, content_type="application/json").status_code == 403
    assert researcher.get(f"/manage/batches/{answered['batch'].pk}/").status_code == 200
    assert researcher.post(f"/manage/batches/{answered['batch'].pk}/open/", {"open": "0"}).status_code == 403
    assert researcher.patch(f"/api/v1/batches/{answered['batch'].pk}/", {"is_open": False},
                            content_type="application/json").status_code == 403
    assert Annotation.objects.get().value == "positive"


def test_an_annotator_cannot_manage_their_own_batch(answered, alice):
    api = client_for(alice.user)
    assert api.patch(f"/api/v1/batches/{answered['batch'].pk}/", {"overlap": 5},
                     content_type="application/json").status_code == 403
    assert api.post("/api/v1/batches/", {"task": answered["batch"].task_id},
                    content_type="application/json").status_code == 403
    assert api.delete(f"/api/v1/assignments/{answered['seat'].pk}/").status_code == 403
    assert api.get("/manage/batches/").status_code == 403
    assert api.get(f"/manage/assignments/{answered['seat'].pk}/").status_code == 200


def test_anonymous_visitors_are_sent_to_log_in(answered):
    anonymous = Client()
    assert anonymous.get("/manage/batches/")["Location"].startswith("/accounts/login/")
    assert anonymous.get("/api/v1/annotations/").status_code in (401, 403)
