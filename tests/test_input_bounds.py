"""Crash inputs of issue 14 (items 4, 6, 7): huge integers, deep nesting, oversized ids, labels and scales, and
page sizes over the cap. Each is a clear 4xx (or a line-numbered CLI error) naming the field, nothing stored."""
from __future__ import annotations

import io
import json
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.core.management.base import CommandError
from django.test import Client
from rest_framework.test import APIClient

from agreement.results.models import ResultModel
from agreement.results.mteb_loading import MAX_ARCHIVE_BYTES, MAX_FILE_BYTES
from annotation.models import Annotation
from tasks_app.core.limits import MAX_ID_CHARS, MAX_SCALE_POINTS
from tasks_app.models import Task
from tests.import_samples import cli_import, counts, jsonl, upload, write
from tests.loop_data import batch_of
from tests.test_loop_api import answer_url, api_as, next_of

pytestmark = pytest.mark.django_db
HUGE = 10 ** 400  # 401 digits


def raw_post(client: APIClient, url: str, body: str, method: str = "post"):
    return getattr(client, method)(url, body, content_type="application/json")


def test_a_huge_integer_answer_is_a_400_naming_the_value(alice) -> None:
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    response = raw_post(client, answer_url(batch, item), f'{{"value": {HUGE}}}')
    assert response.status_code == 400
    assert response.json()["field"] == "value" and "integer too large" in response.json()["detail"]
    assert len(response.content) < 1000 and not Annotation.objects.exists()


def test_a_huge_integer_in_a_patch_is_a_400_and_changes_nothing(alice) -> None:
    batch = batch_of("likert", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    created = client.post(answer_url(batch, item), {"value": {"overall": 5, "coherence": 6}}, format="json")
    path = f"/api/v1/annotations/{created.json()['annotation']['id']}/"
    response = raw_post(client, path, f'{{"value": {{"overall": {HUGE}, "coherence": 6}}}}', method="patch")
    assert response.status_code == 400 and "value.overall" in json.dumps(response.json())
    assert Annotation.objects.get().value == {"overall": 5, "coherence": 6}


def test_a_huge_integer_on_the_page_is_refused_with_the_form(alice) -> None:
    batch = batch_of("sts", [alice])
    page = Client()
    page.force_login(alice.user)
    item = next_of(api_as(alice), batch)["item"]["id"]
    response = page.post(f"/annotate/b/{batch.pk}/items/{item}/answer/", {"score": str(HUGE)})
    assert response.status_code == 422 and not Annotation.objects.exists()  # the form again, with its error
    assert response.context["form"].errors["score"]


def test_a_json_body_nested_100000_deep_is_a_400(alice) -> None:
    batch = batch_of("sts", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    body = '{"value": ' + "[" * 100_000 + "]" * 100_000 + "}"
    response = raw_post(client, answer_url(batch, item), body)
    assert response.status_code == 400
    assert response.json() == {"detail": "JSON parse error - request body: nested too deeply"}
    assert not Annotation.objects.exists()


def test_an_answer_nested_past_the_limit_names_the_path(alice) -> None:
    batch = batch_of("clustering", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    response = client.post(answer_url(batch, item), {"value": [[[[[["a"]]]]]] * 5}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "value[0][0][0][0][0]"
    assert not Annotation.objects.exists()


def test_an_oversized_cluster_id_is_refused_without_echoing_it(alice) -> None:
    batch = batch_of("clustering", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    value = ["a", "a", "b", "b", "x" * 2_000_000]
    response = client.post(answer_url(batch, item), {"value": value}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "value[4]"
    assert f"over the limit of {MAX_ID_CHARS}" in response.json()["detail"]
    assert len(response.content) < 1000 and not Annotation.objects.exists()


def test_an_oversized_label_answer_is_not_echoed_back(alice) -> None:
    batch = batch_of("classification", [alice])
    client = api_as(alice)
    item = next_of(client, batch)["item"]["id"]
    response = client.post(answer_url(batch, item), {"value": "y" * 9_000_000}, format="json")
    assert response.status_code == 400 and len(response.content) < 1000
    assert not Annotation.objects.exists()


def test_sts_gold_with_a_huge_integer_names_line_and_field_in_the_cli(tmp_path: Path) -> None:
    records = [{"id": "s1", "sentence1": "a", "sentence2": "b", "score": 2},
               {"id": "s2", "sentence1": "c", "sentence2": "d", "score": HUGE}]
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "sts.jsonl", jsonl(records)), "T", "sts", scale="0,5")
    assert 'sts.jsonl line 2, field "score": must be a finite number, got an integer too large' in str(failure.value)
    assert counts() == before


def test_sts_gold_with_a_huge_integer_is_a_400_through_the_api(client: Client, carol) -> None:
    client.force_login(carol)
    body = b'{"id": "s1", "sentence1": "a", "sentence2": "b", "score": ' + str(HUGE).encode() + b"}\n"
    before = counts()
    response = client.post("/api/v1/tasks/import/", {"file": upload("sts.jsonl", body), "name": "T", "kind": "sts",
                                                     "language": "eng-Latn"})
    assert response.status_code == 400 and "integer too large" in json.dumps(response.json())
    assert counts() == before


@pytest.mark.parametrize(("record", "field"), [
    ({"id": "i" * 5000, "text": "t", "label": "pos"}, "id"),
    ({"id": "a", "text": "t", "label": "p" * 5000}, "label"),
])
def test_oversized_ids_and_labels_are_refused_at_import(tmp_path: Path, record: dict, field: str) -> None:
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "c.jsonl", jsonl([record])), "T", "classification")
    message = str(failure.value)
    assert f'c.jsonl line 1, field "{field}": is 5,000 characters long, over the limit of {MAX_ID_CHARS}' in message
    assert len(message) < 1000 and counts() == before


def test_clustering_gold_labels_are_capped_too(tmp_path: Path) -> None:
    record = {"id": "k1", "sentences": ["a", "b"], "labels": ["x", "z" * 300]}
    with pytest.raises(CommandError, match=r'field "labels\[1\]": is 300 characters long'):
        cli_import(write(tmp_path / "k.jsonl", jsonl([record])), "T", "clustering")


def test_a_likert_scale_over_the_point_limit_is_refused(tmp_path: Path) -> None:
    record = {"id": "l1", "context": "c", "text": "t"}
    before = counts()
    with pytest.raises(CommandError) as failure:
        cli_import(write(tmp_path / "l.jsonl", jsonl([record])), "T", "likert", axes="overall", scale="1,1000000")
    assert f"has 1,000,000 points, over the limit of {MAX_SCALE_POINTS}" in str(failure.value)
    assert counts() == before
    cli_import(write(tmp_path / "l.jsonl", jsonl([record])), "T", "likert", axes="overall", scale="0,100")
    assert Task.objects.get().scale == (0.0, 100.0, 1.0)


def test_a_page_request_over_the_cap_gets_the_cap(client: Client, dave, settings) -> None:
    assert settings.API_MAX_PAGE_SIZE == 1000  # the documented default
    settings.API_MAX_PAGE_SIZE = 3
    Task.objects.bulk_create(Task(name=f"task {i}", kind="sts", language="eng-Latn") for i in range(5))
    client.force_login(dave)
    body = client.get("/api/v1/tasks/?limit=100000").json()
    assert body["count"] == 5 and len(body["results"]) == 3
    assert "limit=3" in body["next"] and "offset=3" in body["next"]


def zip_of_zeros(sizes: list[int]) -> io.BytesIO:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for i, size in enumerate(sizes):
            archive.writestr(f"org__m/r1/Task{i}.json", bytes(size))
    buffer.seek(0)
    buffer.name = "results.zip"
    return buffer


@pytest.mark.parametrize(("sizes", "message", "peak_mb"), [
    ([600 * 2 ** 20], f"over the {MAX_FILE_BYTES}-byte limit", 5),  # one member: refused by its header
    ([15 * 2 ** 20] * 6, f"archive expands to more than {MAX_ARCHIVE_BYTES} bytes", 5),  # streamed, never held
])
def test_an_archive_bomb_is_refused_with_bounded_memory(carol, sizes: list[int], message: str, peak_mb: float) -> None:
    upload_file = zip_of_zeros(sizes)
    assert len(upload_file.getvalue()) < 1_000_000  # a small upload that expands hugely
    client = APIClient()
    client.force_authenticate(carol)
    client.post("/api/v1/results/import/", {"file": zip_of_zeros([10])}, format="multipart")  # imports warmed up
    tracemalloc.start()
    try:
        response = client.post("/api/v1/results/import/", {"file": upload_file}, format="multipart")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert response.status_code == 400 and message in json.dumps(response.json())
    assert peak < peak_mb * 2 ** 20, f"peak {peak / 2 ** 20:.0f} MB"
    assert not ResultModel.objects.exists()
