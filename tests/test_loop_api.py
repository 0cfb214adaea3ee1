"""The annotator's loop as JSON: next, answer, skip, flag, own annotations; token or session auth."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Annotation, AnnotationRevision, Batch
from annotation.serializers import NextItemSerializer, WriteResultSerializer
from tasks_app.models import Item
from tests.batch_helpers import fast_password_hashing  # noqa: F401  (autouse: quick logins)
from tests.loop_data import RECORDS, batch_of

pytestmark = pytest.mark.django_db


def api_as(annotator) -> APIClient:
    client = APIClient()
    token, _ = Token.objects.get_or_create(user=annotator.user)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def next_of(client: APIClient, batch) -> dict:
    response = client.get(f"/api/v1/batches/{batch.pk}/next/")
    assert response.status_code == 200, response.content
    return response.json()


def answer_url(batch, item_id: int, action: str = "answer") -> str:
    return f"/api/v1/batches/{batch.pk}/items/{item_id}/{action}/"


def test_next_gives_the_item_the_task_and_progress(alice):
    batch = batch_of("reranking", [alice])
    data = next_of(api_as(alice), batch)
    assert data["item"]["kind"] == "reranking"
    assert set(data["item"]["payload"]) == {"query", "instruction", "candidates"}
    assert data["task"]["kind"] == "reranking" and data["task"]["instructions"].startswith("Read **every**")
    assert data["progress"] == {"done": 0, "skipped": 0, "total": 2}
    assert data["answer_url"] == answer_url(batch, data["item"]["id"])


def test_next_is_the_same_item_while_the_hold_lives(alice):
    batch = batch_of("pairwise", [alice])
    client = api_as(alice)
    assert next_of(client, batch)["item"]["id"] == next_of(client, batch)["item"]["id"]


def test_an_answer_on_a_task_without_a_campaign_asks_for_no_review_beyond_one_probe(
        alice, django_capture_on_commit_callbacks):
    """After its commit every answer asks the task's campaigns for a review (agreement/signals.py). On a task no
    campaign collects, that is one statement, the prepared probe of the campaign table
    (agreement/campaigns/review_queue.py COLLECTING_SQL): the ORM query of campaigns and their reviews, which it ran
    on every answer before, cost 4,000 Python calls and a plan each time, the loop's slowdown of issue 38
    (docs/crowd.md, "The annotation loop beside Label Studio")."""
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    with CaptureQueriesContext(connection) as queries, django_capture_on_commit_callbacks(execute=True):
        assert client.post(answer_url(batch, item), {"value": 2.5}, format="json").status_code == 201
    # the hooks ran (their statements are captured): the probe is the one statement on the campaign tables
    campaign_statements = [q["sql"] for q in queries.captured_queries if "agreement_campaign" in q["sql"]]
    assert campaign_statements == [
        f"SELECT 1 FROM agreement_campaign WHERE task_id = {batch.task_id} AND state = 'collecting' LIMIT 1"]


def test_an_answer_is_created_once_and_a_replay_is_200_without_a_second_row(alice):
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    first = client.post(answer_url(batch, item), {"value": 2.5, "time_spent_ms": 4200}, format="json")
    assert first.status_code == 201
    assert first.json()["created"] is True and first.json()["annotation"]["value"] == 2.5
    replay = client.post(answer_url(batch, item), {"value": 2.5}, format="json")
    assert replay.status_code == 200 and replay.json()["created"] is False
    annotation = Annotation.objects.get(annotator=alice, item_id=item)
    assert annotation.source == "api"
    assert 0 <= annotation.time_spent_ms <= 4200  # the client's figure, bounded by the server's hold clock


def test_an_invalid_value_is_a_400_naming_the_problem(alice):
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    response = client.post(answer_url(batch, item), {"value": 5.25}, format="json")
    assert response.status_code == 400
    assert response.json()["field"] == "value" and "outside the scale 0–5" in response.json()["detail"]
    missing = client.post(answer_url(batch, item), {}, format="json")
    assert missing.status_code == 400 and "value" in missing.json()
    assert not Annotation.objects.exists()


def test_reranking_answers_must_judge_every_candidate(alice):
    batch = batch_of("reranking", [alice])
    client = api_as(alice)
    data = next_of(client, batch)
    ids = [c["id"] for c in data["item"]["payload"]["candidates"]]
    partial = client.post(data["answer_url"], {"value": {ids[0]: 1}}, format="json")
    assert partial.status_code == 400 and "candidates not judged" in partial.json()["detail"]
    full = client.post(data["answer_url"], {"value": {cid: 0 for cid in ids}}, format="json")
    assert full.status_code == 201


def test_nothing_left_is_a_204(alice):
    batch = batch_of("likert", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    client.post(answer_url(batch, item), {"value": {"overall": 7, "coherence": 6}}, format="json")
    response = client.get(f"/api/v1/batches/{batch.pk}/next/")
    assert response.status_code == 204 and response.content == b""


def test_skip_and_flag_take_the_item_out_of_my_queue(alice):
    batch = batch_of("pairwise", [alice])
    client = api_as(alice)
    first = next_of(client, batch)["item"]["id"]
    skipped = client.post(answer_url(batch, first, "skip"), {"reason": "cannot judge"}, format="json")
    assert skipped.status_code == 201 and skipped.json()["annotation"]["skipped"] is True
    second = next_of(client, batch)["item"]["id"]
    assert second != first
    assert client.post(answer_url(batch, second, "flag"), {}, format="json").status_code == 400
    flagged = client.post(answer_url(batch, second, "flag"), {"comment": "ambiguous"}, format="json")
    assert flagged.json()["annotation"]["flagged"] is True
    assert flagged.json()["annotation"]["flag_comment"] == "ambiguous"
    assert client.get(f"/api/v1/batches/{batch.pk}/next/").status_code == 204


def test_an_item_never_held_to_me_is_refused_with_a_clear_message(alice):
    batch = batch_of("classification", [alice])
    client = api_as(alice)
    given = next_of(client, batch)["item"]["id"]
    other = batch.batch_items.exclude(item_id=given).first().item_id
    response = client.post(answer_url(batch, other), {"value": "positive"}, format="json")
    assert response.status_code == 409
    assert response.json()["code"] == "not_held" and response.json()["detail"]


def test_batches_items_and_annotations_of_others_are_404(alice, bob):
    batch = batch_of("classification", [alice])
    alice_client, bob_client = api_as(alice), api_as(bob)
    item = next_of(alice_client, batch)["item"]["id"]
    created = alice_client.post(answer_url(batch, item), {"value": "positive"}, format="json").json()
    assert bob_client.get(f"/api/v1/batches/{batch.pk}/next/").status_code == 404
    assert bob_client.post(answer_url(batch, item), {"value": "negative"}, format="json").status_code == 404
    annotation_url = f"/api/v1/annotations/{created['annotation']['id']}/"
    assert bob_client.get(annotation_url).status_code == 404
    assert bob_client.patch(annotation_url, {"value": "negative"}, format="json").status_code == 404
    other_batch = batch_of("pairwise", [bob])
    foreign_item = other_batch.batch_items.first().item_id
    assert alice_client.post(answer_url(batch, foreign_item), {"value": "a"}, format="json").status_code == 404
    assert Annotation.objects.get().value == "positive"


def test_i_can_read_and_revise_my_annotation_but_not_delete_it(alice):
    batch = batch_of("classification", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    created = client.post(answer_url(batch, item), {"value": "positive"}, format="json")
    annotation_id = created.json()["annotation"]["id"]
    path = f"/api/v1/annotations/{annotation_id}/"
    assert client.get(path).json()["value"] == "positive"
    assert client.patch(path, {"value": "bogus"}, format="json").status_code == 400
    revised = client.patch(path, {"value": "neutral"}, format="json")
    assert revised.status_code == 200 and revised.json()["value"] == "neutral"
    assert list(AnnotationRevision.objects.values_list("value", flat=True)) == ["positive"]
    assert client.delete(path).status_code == 405
    assert Annotation.objects.filter(pk=annotation_id).exists()


def test_my_batches_lists_progress_and_where_to_go_next(alice):
    batch = batch_of("sts", [alice])
    data = api_as(alice).get("/api/v1/my/batches/").json()
    assert [row["batch"]["id"] for row in data] == [batch.pk]
    assert data[0]["progress"]["total"] == 2 and data[0]["next_url"] == f"/api/v1/batches/{batch.pk}/next/"


def test_a_token_made_by_the_management_command_works(alice, capsys):
    batch = batch_of("pairwise", [alice])
    call_command("drf_create_token", "alice")
    key = capsys.readouterr().out.split()[2]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert client.get(f"/api/v1/batches/{batch.pk}/next/").status_code == 200
    assert APIClient().get(f"/api/v1/batches/{batch.pk}/next/").status_code in (401, 403)


def test_the_loop_is_documented_in_the_openapi_schema(client, alice):
    client.force_login(alice.user)  # the schema is behind login (issue 14)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    for path in ("/api/v1/batches/{batch_id}/next/", "/api/v1/batches/{batch_id}/items/{item_id}/answer/",
                 "/api/v1/batches/{batch_id}/items/{item_id}/skip/", "/api/v1/batches/{batch_id}/items/{item_id}/flag/",
                 "/api/v1/annotations/{annotation_id}/", "/api/v1/my/batches/"):
        assert path in paths, path
    answer = paths["/api/v1/batches/{batch_id}/items/{item_id}/answer/"]["post"]
    assert {"200", "201", "400", "404", "409"} <= set(answer["responses"])
    assert set(paths["/api/v1/annotations/{annotation_id}/"]) >= {"get", "patch"}
    assert "delete" not in paths["/api/v1/annotations/{annotation_id}/"]
    assert schema["components"]["securitySchemes"]["tokenAuth"]["type"] == "apiKey"


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_the_fast_responses_equal_their_documented_serializers(alice, kind):
    """next and answer build their JSON directly (annotation/serializers.py); it must stay what the documented
    serializers give, field for field, for every kind, a due date, an answer, a skip and a flag."""
    batch = batch_of(kind, [alice])
    Batch.objects.filter(pk=batch.pk).update(due_date="2031-05-17")
    client = api_as(alice)
    data = next_of(client, batch)
    item = Item.objects.select_related("task").get(pk=data["item"]["id"])
    batch = Batch.objects.select_related("task").get(pk=batch.pk)
    urls = {f"{action}_url": answer_url(batch, item.pk, action) for action in ("answer", "skip", "flag")}
    expected = NextItemSerializer({"item": item, "task": batch.task, "batch": batch, "progress": data["progress"],
                                   **urls}).data
    assert data == expected and data["batch"]["due_date"] == "2031-05-17"
    for action, body in (("skip", {"reason": "unsure", "time_spent_ms": 1200}), ("flag", {"comment": "odd"})):
        written = client.post(answer_url(batch, item.pk, action), body, format="json").json()
        annotation = Annotation.objects.get(pk=written["annotation"]["id"])
        assert written == WriteResultSerializer({"annotation": annotation, "created": written["created"],
                                                 "revised": False}).data
    assert written["annotation"]["flagged"] is True and written["annotation"]["submitted_at"].endswith("Z")


def test_a_wrong_token_or_a_deactivated_users_token_is_refused(alice):
    """401 with a `WWW-Authenticate: Token` challenge (token authentication is DRF's first class)."""
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    assert client.get(f"/api/v1/batches/{batch.pk}/next/").status_code == 200
    alice.user.is_active = False
    alice.user.save(update_fields=["is_active"])
    refused = client.get(f"/api/v1/batches/{batch.pk}/next/")
    assert refused.status_code == 401 and refused.json()["detail"] == "User inactive or deleted."
    for key in ("0" * 40, "bad\x00key"):
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        refused = client.get(f"/api/v1/batches/{batch.pk}/next/")
        assert refused.status_code == 401 and refused.json()["detail"] == "Invalid token."
        assert refused["WWW-Authenticate"] == "Token"
