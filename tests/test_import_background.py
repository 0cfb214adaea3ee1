"""Big dataset imports run on a worker, not in the web request (issue 23, item 8; tasks_app/import_jobs.py).

A real Celery worker imports the stored upload; the threshold (IMPORT_IN_BACKGROUND_BYTES) is set low so a
few hundred lines go to the background. The same import runs there: all or nothing, with the same problems
(file, line, field), and the API answers 202 with a status URL, the upload page a progress page."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from tasks_app.models import ImportJob, Task
from tests.import_samples import counts, jsonl, upload

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
THRESHOLD = 2000
OPTIONS = {"name": "Big", "kind": "classification", "language": "eng-Latn", "labels": "pos,neg"}


@pytest.fixture
def background(settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, start_worker) -> Path:
    spool = tmp_path / "imports"
    settings.IMPORT_IN_BACKGROUND_BYTES = THRESHOLD
    settings.IMPORT_SPOOL_DIR = spool
    monkeypatch.setenv("IMPORT_SPOOL_DIR", str(spool))  # the worker reads the stored files from here
    start_worker()
    return spool


def records(n: int, bad_line: int | None = None) -> bytes:
    rows = [{"id": f"r{i}", "text": f"Review number {i}, long enough to matter.", "label": "pos" if i % 2 else "neg"}
            for i in range(1, n + 1)]
    if bad_line is not None:
        rows[bad_line - 1] = {"id": f"r{bad_line}", "text": 17, "label": "pos"}
    return jsonl(rows)


def wait_finished(client: Client, url: str, timeout: float = 90) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = client.get(url).json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.3)
    raise AssertionError(f"the import did not finish within {timeout:g}s")


def test_a_big_upload_through_the_api_is_202_with_a_status_url_and_a_worker_imports_it(
        client: Client, carol, background: Path) -> None:
    client.force_login(carol)
    content = records(300)
    assert len(content) > THRESHOLD
    response = client.post("/api/v1/tasks/import/", {"file": upload("big.jsonl", content), **OPTIONS})
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "queued" and body["file"] == "big.jsonl" and body["size"] == len(content)
    assert response["Location"] == body["status_url"] == f"/api/v1/tasks/imports/{body['id']}/"
    assert body["page_url"] == f"/tasks/imports/{body['id']}/"
    done = wait_finished(client, body["status_url"])
    assert done["status"] == "done" and done["percent"] == 100 and done["problems"] == []
    task = Task.objects.get(name="Big")
    assert done["summary"]["task_id"] == task.pk and done["summary"]["added"] == 300
    assert done["summary"]["added_with_gold"] == 300 and task.items.count() == 300
    assert list(background.iterdir()) == []  # the stored copy is removed


def test_a_big_bad_upload_imports_nothing_and_its_job_names_file_line_and_field(
        client: Client, carol, background: Path) -> None:
    client.force_login(carol)
    before = counts()
    response = client.post("/api/v1/tasks/import/", {"file": upload("bad.jsonl", records(300, bad_line=287)),
                                                      **OPTIONS})
    assert response.status_code == 202, response.content
    failed = wait_finished(client, response.json()["status_url"])
    assert failed["status"] == "failed" and failed["summary"] is None
    assert [(p["file"], p["line"], p["field"]) for p in failed["problems"]] == [("bad.jsonl", 287, "text")]
    assert "string" in failed["problems"][0]["message"]
    assert counts() == before  # all or nothing, as in the request
    assert list(background.iterdir()) == []


def test_a_bad_option_on_a_big_upload_is_refused_at_once(client: Client, carol, background: Path) -> None:
    client.force_login(carol)
    response = client.post("/api/v1/tasks/import/", {"file": upload("big.jsonl", records(300)),
                                                      **OPTIONS, "language": "english"})
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "language"
    assert ImportJob.objects.count() == 0 and list(background.glob("*")) == []


def test_the_upload_page_sends_a_big_file_to_its_progress_page_which_shows_the_result(
        client: Client, carol, background: Path) -> None:
    client.force_login(carol)
    response = client.post("/tasks/import/", {"file": upload("page.jsonl", records(200)), **OPTIONS})
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/tasks/imports/{job.pk}/"
    page = client.get(response["Location"])
    assert page.status_code == 200 and "Import of page.jsonl" in page.content.decode()
    deadline = time.monotonic() + 90
    while not ImportJob.objects.get(pk=job.pk).is_finished and time.monotonic() < deadline:
        time.sleep(0.3)
    fragment = client.get(response["Location"], HTTP_HX_REQUEST="true").content.decode()
    task = Task.objects.get(name="Big")
    assert "Imported" in fragment and "created task &#x27;Big&#x27;" in fragment
    assert f'href="/tasks/{task.pk}/"' in fragment and "hx-trigger" not in fragment  # done: no more polling
    assert task.items.count() == 200


def test_a_small_upload_still_imports_in_the_request(client: Client, carol, settings: Any) -> None:
    settings.IMPORT_IN_BACKGROUND_BYTES = THRESHOLD
    client.force_login(carol)
    response = client.post("/api/v1/tasks/import/", {"file": upload("small.jsonl", records(5)), **OPTIONS})
    assert response.status_code == 201 and response.json()["added"] == 5
    assert ImportJob.objects.count() == 0


def test_only_admins_see_an_import_job(client: Client, carol, dave, alice) -> None:
    job = ImportJob.objects.create(created_by=carol, file_name="x.jsonl", stored_as="gone.jsonl", size=10)
    for user in (dave, alice.user):
        client.force_login(user)
        assert client.get(f"/api/v1/tasks/imports/{job.pk}/").status_code == 403
        assert client.get(f"/tasks/imports/{job.pk}/").status_code == 403
    client.logout()
    assert client.get(f"/api/v1/tasks/imports/{job.pk}/").status_code in (401, 403)
