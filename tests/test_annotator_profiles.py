"""Annotator profiles managed in the app: languages with proficiency, kind, active flag (pages and API)."""
from __future__ import annotations

from django.contrib.auth import authenticate
from django.test import Client

from annotation.core import assignment as engine
from annotation.models import Annotator, AnnotatorLanguage, Hold

from .batch_helpers import fast_password_hashing, make_batch, make_task  # noqa: F401


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def formset(rows: list[tuple[str, str]], existing: list[int] = (), delete: set[int] = frozenset()) -> dict:
    data = {"languages-TOTAL_FORMS": str(len(rows)), "languages-INITIAL_FORMS": str(len(existing)),
            "languages-MIN_NUM_FORMS": "0", "languages-MAX_NUM_FORMS": "1000"}
    for i, (language, proficiency) in enumerate(rows):
        data[f"languages-{i}-language"] = language
        data[f"languages-{i}-proficiency"] = proficiency
        if i < len(existing):
            data[f"languages-{i}-id"] = str(existing[i])
        if i in delete:
            data[f"languages-{i}-DELETE"] = "on"
    return data


def languages_of(annotator: Annotator) -> dict[str, str]:
    return dict(AnnotatorLanguage.objects.filter(annotator=annotator).values_list("language", "proficiency"))


def test_an_admin_creates_an_annotator_with_languages_on_the_page(carol):
    data = {"username": "hana", "password": "a-long-secret-9", "agent": "human",
            **formset([("eng-Latn", "native"), ("dan-Latn", "near-native")])}
    response = client_for(carol).post("/manage/annotators/new/", data)
    hana = Annotator.objects.get(user__username="hana")
    assert response.status_code == 302 and response["Location"] == f"/manage/annotators/{hana.pk}/"
    assert languages_of(hana) == {"eng-Latn": "native", "dan-Latn": "near-native"}
    assert authenticate(username="hana", password="a-long-secret-9") == hana.user
    assert hana.user.groups.filter(name="annotator").exists()


def test_a_bad_language_code_on_the_page_is_named_and_nothing_is_created(carol):
    data = {"username": "hana", "password": "a-long-secret-9", "agent": "human", **formset([("English", "native")])}
    response = client_for(carol).post("/manage/annotators/new/", data)
    assert response.status_code == 200
    assert "MTEB-style language code" in response.content.decode()
    assert not Annotator.objects.filter(user__username="hana").exists()


def test_an_admin_edits_languages_and_kind(carol, alice):
    rows = list(AnnotatorLanguage.objects.filter(annotator=alice).order_by("language"))  # dan, eng
    data = {"agent": "human", **formset([("dan-Latn", "native"), ("eng-Latn", "native"), ("ara-Arab", "fluent")],
                                       existing=[r.pk for r in rows], delete={1})}
    response = client_for(carol).post(f"/manage/annotators/{alice.pk}/", data)
    assert response.status_code == 302
    assert languages_of(alice) == {"dan-Latn": "native", "ara-Arab": "fluent"}


def test_deactivating_on_the_page_returns_held_items_and_the_htmx_row_says_so(carol, alice):
    batch = make_batch(make_task(n=2), [alice])
    engine.next_item(alice, batch)
    response = client_for(carol).post(f"/manage/annotators/{alice.pk}/active/", {"active": "0"},
                                      HTTP_HX_REQUEST="true")
    alice.refresh_from_db()
    assert alice.active is False
    assert not Hold.objects.filter(annotator=alice).exists()
    body = response.content.decode()
    assert body.startswith(f'<tr id="annotator-{alice.pk}">') and "inactive" in body and "Reactivate" in body


def test_an_admin_creates_and_updates_an_annotator_through_the_api(carol):
    api = client_for(carol)
    created = api.post("/api/v1/annotators/", {"username": "gpt", "agent": "llm",
                                               "languages": [{"language": "eng-Latn", "proficiency": "fluent"}]},
                       content_type="application/json")
    assert created.status_code == 201
    body = created.json()
    assert (body["username"], body["agent"], body["active"], body["languages"]) == (
        "gpt", "llm", True, [{"language": "eng-Latn", "proficiency": "fluent"}])
    patched = api.patch(f"/api/v1/annotators/{body['id']}/",
                        {"active": False, "languages": [{"language": "dan-Latn", "proficiency": "native"}]},
                        content_type="application/json")
    assert patched.status_code == 200
    assert (patched.json()["active"], patched.json()["languages"]) == (
        False, [{"language": "dan-Latn", "proficiency": "native"}])


def test_deactivating_through_the_api_returns_held_items(carol, alice):
    batch = make_batch(make_task(n=1), [alice])
    engine.next_item(alice, batch)
    client_for(carol).patch(f"/api/v1/annotators/{alice.pk}/", {"active": False}, content_type="application/json")
    assert not Hold.objects.filter(annotator=alice).exists()


def test_the_api_names_a_bad_language_code(carol):
    body = {"username": "hana", "languages": [{"language": "en", "proficiency": "native"}]}
    response = client_for(carol).post("/api/v1/annotators/", body, content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {"languages": {"0": {"language": [
        "Use an MTEB-style language code such as eng-Latn or ara-Arab."]}}}


def test_a_researcher_reads_profiles_but_cannot_change_them(dave, alice):
    researcher = client_for(dave)
    assert [a["username"] for a in researcher.get("/api/v1/annotators/").json()["results"]] == ["alice"]
    assert researcher.patch(f"/api/v1/annotators/{alice.pk}/", {"agent": "llm"},
                            content_type="application/json").status_code == 403
    assert researcher.post("/api/v1/annotators/", {"username": "x", "languages": []},
                           content_type="application/json").status_code == 403
    assert researcher.post(f"/manage/annotators/{alice.pk}/active/", {"active": "0"}).status_code == 403
    assert researcher.get("/manage/annotators/").status_code == 200
    alice.refresh_from_db()
    assert (alice.agent, alice.active) == ("human", True)


def test_an_annotator_sees_only_their_own_profile(alice, bob):
    api = client_for(alice.user)
    assert [a["username"] for a in api.get("/api/v1/annotators/").json()["results"]] == ["alice"]
    assert api.get(f"/api/v1/annotators/{bob.pk}/").status_code == 404
    assert api.patch(f"/api/v1/annotators/{bob.pk}/", {"active": False},
                     content_type="application/json").status_code == 404
    assert api.get(f"/manage/annotators/{bob.pk}/").status_code == 404
    assert api.get(f"/manage/annotators/{alice.pk}/").status_code == 200
