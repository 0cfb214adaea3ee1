"""Hostile JSON in uploads is a 400 naming the file, line and field, never a 500 (issue 23, item 7).

Python's decoder fails in two ways that are not JSONDecodeError: an integer of more than 4300 digits raises a
bare ValueError (CPython 3.11's limit on int parsing), and nesting 100,000 deep raises RecursionError. Each
door that parses uploaded JSON lines is tried with both: the task import API and page, the annotation import
API and the retrieval corpus upload; MTEB results files are in tests/test_results_bad_inputs.py.
"""
from __future__ import annotations

import json

import pytest
from django.test import Client

from agreement.retrieval.models import Collection
from annotation.models import Annotation
from tasks_app.models import Item, Task
from tests.import_samples import SAMPLES, cli_import, jsonl, upload, write
from tests.retrieval_helpers import MINIFACT

pytestmark = pytest.mark.django_db

LONG = "1" * 5001
DIGITS = "a number of 5001 digits (column {column}), over the 4300-digit limit for integers"
HUGE_LINE = '{"text": "fine", "label": ' + LONG + "}"
DEEP_LINE = "[" * 100_000 + "]" * 100_000


def admin_client(carol) -> Client:
    client = Client()
    client.force_login(carol)
    return client


def two_lines(second: str) -> bytes:
    return (json.dumps({"text": "fine", "label": "x"}) + "\n" + second + "\n").encode()


def import_task(client: Client, content: bytes):
    return client.post("/api/v1/tasks/import/", {"file": upload("d.jsonl", content), "name": "T",
                                                 "kind": "classification", "language": "eng-Latn", "labels": "x"})


def test_the_task_import_api_answers_a_5001_digit_integer_with_file_line_and_field(carol) -> None:
    response = import_task(admin_client(carol), two_lines(HUGE_LINE))
    assert response.status_code == 400
    assert response.json()["errors"] == [{"file": "d.jsonl", "line": 2, "field": "label",
                                          "message": DIGITS.format(column=27)}]
    assert not Task.objects.exists() and not Item.objects.exists()


def test_the_task_import_api_answers_json_nested_100k_deep_with_file_and_line(carol) -> None:
    response = import_task(admin_client(carol), two_lines(DEEP_LINE))
    assert response.status_code == 400
    assert response.json()["errors"] == [{"file": "d.jsonl", "line": 2, "field": None,
                                          "message": "invalid JSON: nested too deeply"}]
    assert not Task.objects.exists()


def test_the_task_import_page_shows_the_5001_digit_integer_problem(carol) -> None:
    response = admin_client(carol).post("/tasks/import/", {
        "file": upload("d.jsonl", two_lines(HUGE_LINE)), "name": "T", "kind": "classification",
        "language": "eng-Latn", "labels": "x"})
    assert response.status_code == 400
    assert "d.jsonl line 2, field &quot;label&quot;: " + DIGITS.format(column=27) in response.content.decode()
    assert not Task.objects.exists()


def test_the_annotation_import_api_answers_a_5001_digit_integer_naming_the_field(carol, tmp_path) -> None:
    options, records, _ = SAMPLES["reranking"]
    cli_import(write(tmp_path / "r.jsonl", jsonl(records)), "Rerank", "reranking", language="dan-Latn", **options)
    line = '{"item": "q1", "annotator": "ext-1", "annotator_agent": "human", "value": {"p1": ' + LONG + "}}"
    response = admin_client(carol).post("/api/v1/annotations/import/", {"file": upload("a.jsonl", line.encode()),
                                                                        "task": "Rerank"})
    assert response.status_code == 400
    assert response.json()["errors"] == [{"file": "a.jsonl", "line": 1, "field": "p1",
                                          "message": DIGITS.format(column=82)}]  # the value starts at column 82
    assert not Annotation.objects.exists()


def test_the_corpus_upload_answers_a_5001_digit_integer_naming_the_field(carol) -> None:
    corpus = (MINIFACT / "en" / "corpus.jsonl").read_bytes() + ('{"_id": ' + LONG + ', "text": "x"}\n').encode()
    files = {"corpus": upload("corpus.jsonl", corpus),
             "queries": upload("queries.jsonl", (MINIFACT / "en" / "queries.jsonl").read_bytes())}
    response = admin_client(carol).post("/api/v1/retrieval/collections/", {"name": "MiniFact",
                                                                           "language": "eng-Latn", **files})
    assert response.status_code == 400
    n_lines = len((MINIFACT / "en" / "corpus.jsonl").read_text().splitlines())
    assert response.json()["errors"] == [{"file": "corpus.jsonl", "line": n_lines + 1, "field": "_id",
                                          "message": DIGITS.format(column=9)}]
    assert not Collection.objects.exists()


def test_an_api_body_with_a_5001_digit_integer_is_a_400(carol) -> None:
    response = admin_client(carol).post("/api/v1/annotators/", '{"username": "x", "password": ' + LONG + "}",
                                        content_type="application/json")
    assert response.status_code == 400
    assert response.json()["detail"].startswith("JSON parse error - Exceeds the limit (4300 digits)")
