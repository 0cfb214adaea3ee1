"""The task API: tasks scoped to the requesting user, never with gold; dataset import for admins only."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from annotation.models import Batch, BatchAssignee
from tasks_app.models import Task
from tests.import_samples import SAMPLES, cli_import, counts, jsonl, upload, write

pytestmark = pytest.mark.django_db


@pytest.fixture
def tasks(tmp_path: Path) -> dict[str, Task]:
    for kind in SAMPLES:  # a task of every registered kind, from its samples
        options, records, _ = SAMPLES[kind]
        cli_import(write(tmp_path / f"{kind}.jsonl", jsonl(records)), kind.title(), kind, **options)
    return {t.kind: t for t in Task.objects.all()}


def test_researchers_list_every_task_with_counts_and_no_gold(client: Client, dave, tasks: dict[str, Task]) -> None:
    client.force_login(dave)
    body = client.get("/api/v1/tasks/").json()
    assert body["count"] == len(SAMPLES)
    by_name = {t["name"]: t for t in body["results"]}
    assert sorted(by_name) == sorted(kind.title() for kind in SAMPLES)
    assert by_name["Classification"]["n_items"] == 3 and by_name["Classification"]["n_with_gold"] == 2
    assert by_name["Classification"]["labels"] == ["pos", "neg"] and by_name["Classification"]["scale"] is None
    assert by_name["Sts"]["scale"] == {"min": 0.0, "max": 5.0, "step": 0.5}
    assert by_name["Likert"]["axes"] == ["overall", "coherence"]
    assert "gold" not in str(body).replace("n_with_gold", "")


def test_annotators_get_only_tasks_they_have_batches_in(client: Client, alice, bob, tasks: dict[str, Task]) -> None:
    batch = Batch.objects.create(task=tasks["sts"], name="b1", language="eng-Latn")
    BatchAssignee.objects.create(batch=batch, annotator=alice)
    Batch.objects.create(task=tasks["likert"], name="b2", language="eng-Latn")  # nobody assigned
    client.force_login(alice.user)
    body = client.get("/api/v1/tasks/").json()
    assert [t["name"] for t in body["results"]] == ["Sts"]
    assert body["results"][0]["n_items"] == 2
    assert client.get(f"/api/v1/tasks/{tasks['sts'].pk}/").json()["name"] == "Sts"
    assert client.get(f"/api/v1/tasks/{tasks['classification'].pk}/").status_code == 404
    client.force_login(bob.user)
    assert client.get("/api/v1/tasks/").json()["count"] == 0


def test_a_task_reads_with_its_settings(client: Client, carol, tasks: dict[str, Task]) -> None:
    task = tasks["sts"]
    client.force_login(carol)
    body = client.get(f"/api/v1/tasks/{task.pk}/").json()
    assert {k: body[k] for k in ("id", "name", "kind", "language", "text_direction", "n_items", "sample_size")} == {
        "id": task.pk, "name": "Sts", "kind": "sts", "language": "eng-Latn", "text_direction": "ltr",
        "n_items": 2, "sample_size": None}


def test_anonymous_callers_get_nothing(client: Client, tasks: dict[str, Task]) -> None:
    assert client.get("/api/v1/tasks/").status_code == 401
    assert client.post("/api/v1/tasks/import/", {}).status_code == 401


def test_only_admins_may_import(client: Client, alice, dave) -> None:
    before = counts()
    for user in (alice.user, dave):
        client.force_login(user)
        response = client.post("/api/v1/tasks/import/", {"file": upload("a.jsonl", b'{"text": "a"}\n'), "name": "T",
                                                         "kind": "classification", "language": "eng-Latn",
                                                         "labels": "x"})
        assert response.status_code == 403
        assert response.json() == {"detail": "Only admins may do this."}
    assert counts() == before


def test_reimporting_through_the_api_reports_unchanged_items(client: Client, carol) -> None:
    client.force_login(carol)
    options, records, _ = SAMPLES["likert"]
    body = {"name": "L", "kind": "likert", "language": "eng-Latn", **options}
    first = client.post("/api/v1/tasks/import/", {"file": upload("l.jsonl", jsonl(records)), **body}).json()
    again = client.post("/api/v1/tasks/import/", {"file": upload("l.jsonl", jsonl(records)), **body}).json()
    assert (first["created_task"], first["added"], first["unchanged"]) == (True, 1, 0)
    assert (again["created_task"], again["added"], again["unchanged"]) == (False, 0, 1)


def test_the_openapi_schema_documents_the_endpoints(client: Client, dave) -> None:
    client.force_login(dave)
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    paths = schema["paths"]
    expected = {"/api/v1/tasks/", "/api/v1/tasks/{id}/", "/api/v1/tasks/import/", "/api/v1/annotations/import/",
                "/api/v1/tasks/imports/{job_id}/"}
    assert expected <= set(paths)
    upload_body = paths["/api/v1/tasks/import/"]["post"]["requestBody"]["content"]["multipart/form-data"]
    assert upload_body["schema"]["$ref"].endswith("/TaskImportRequest")
    assert set(paths["/api/v1/tasks/import/"]["post"]["responses"]) == {"201", "202", "400", "403"}
    assert "update_gold" in schema["components"]["schemas"]["TaskImportRequest"]["properties"]
