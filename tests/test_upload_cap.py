"""Uploads over MAX_UPLOAD_BYTES are answered 413 with the limit and what to do instead, before the body is
read, on every import door: the dataset import page and API, the Django admin's import page, the annotation
import API and the collection upload (issue 23, item 8). The MTEB results import keeps its own limit."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agreement.results.models import ResultModel
from agreement.retrieval.models import Collection
from annotation.models import Annotation
from tasks_app.models import Task
from tests.import_samples import upload
from tests.test_results_bad_inputs import VALID

pytestmark = pytest.mark.django_db
LIMIT = 10_000
BIG = b'{"text": "a", "label": "x"}\n' * 20_000  # 560 kB: over LIMIT and the 64 kB allowance for the form
MESSAGE = "over the 10,000-byte upload limit (MAX_UPLOAD_BYTES); nothing was imported"


@pytest.fixture(autouse=True)
def small_limit(settings) -> None:
    settings.MAX_UPLOAD_BYTES = LIMIT


def admin_client() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("root", password="correct-horse-battery"))
    return client


@pytest.mark.parametrize("url", ["/api/v1/tasks/import/", "/api/v1/annotations/import/",
                                 "/api/v1/retrieval/collections/"])
def test_the_api_answers_an_oversized_upload_413_in_json(url: str) -> None:
    response = admin_client().post(url, {"file": upload("big.jsonl", BIG), "name": "T", "kind": "classification",
                                         "language": "eng-Latn", "labels": "x", "task": "T",
                                         "corpus": upload("corpus.jsonl", BIG)})
    assert response.status_code == 413
    body = response.json()
    assert MESSAGE in body["detail"] and body["errors"] == [body["detail"]]
    assert "import_task, import_annotations, import_collection" in body["detail"]
    assert not Task.objects.exists() and not Annotation.objects.exists() and not Collection.objects.exists()


@pytest.mark.parametrize("url", ["/tasks/import/", "/admin/tasks_app/task/import/", "/retrieval/upload/"])
def test_a_page_answers_an_oversized_upload_413_with_the_message(url: str) -> None:
    response = admin_client().post(url, {"file": upload("big.jsonl", BIG), "name": "T", "kind": "classification",
                                         "language": "eng-Latn", "labels": "x"})
    assert response.status_code == 413
    assert MESSAGE in response.content.decode() and "Content-Security-Policy" in response.headers
    assert not Task.objects.exists()


def test_an_upload_under_the_limit_is_imported_as_before() -> None:
    response = admin_client().post("/api/v1/tasks/import/", {
        "file": upload("small.jsonl", b'{"text": "a", "label": "x"}\n'), "name": "T", "kind": "classification",
        "language": "eng-Latn", "labels": "x"})
    assert response.status_code == 201 and Task.objects.get().name == "T"


def test_the_results_import_keeps_its_own_limit() -> None:
    """A results file over MAX_UPLOAD_BYTES but under RESULTS_MAX_UPLOAD_BYTES is imported."""
    padded = json.dumps({**VALID, "padding": "x" * 100_000}).encode()
    response = admin_client().post("/api/v1/results/import/", {"file": upload("HUMESTS12.json", padded),
                                                               "model_name": "acme/model", "revision": "r1"})
    assert response.status_code == 201, response.content
    assert ResultModel.objects.filter(name="acme/model").exists()
