"""A crawl of every route with hostile ids and hostile values gets no 5xx (issue 23: "a crawl of every page and
API route with hostile ids and values gets no 5xx").

Every URL pattern of the tree (web pages, /api/v1/, the Django admin) is requested as an admin, a researcher,
an annotator and anonymously, with DEBUG off as in production and every exception turned into the response it
would be (no test-client re-raise):

- each path parameter set to a negative number, 0, a string, Unicode, and an id that does not exist;
- each route with its parameters set to real rows (a task, its items, a batch, an annotator), then GET with
  hostile query values (30-digit and negative numbers, NUL bytes, Unicode, 5,000 characters, on the names
  lists, pages and filters read) and POST with hostile bodies (a form of such values, a JSON object of them,
  JSON nested 10,000 deep, a 5,001-digit number, and bytes that are not UTF-8).

tests/test_hostile_ids.py keeps the narrower crawl of ids past 64 bits.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from annotation.models import Batch
from tests.loop_data import batch_of
from tests.test_hostile_ids import routes

pytestmark = pytest.mark.django_db
PARAMETER = re.compile(r"\(\?P<(\w+)>[^)]*\)|<(?:(\w+):)?(\w+)>")
HOSTILE_IDS = ["-1", "0", "abc", "%C3%BC%E5%90%8D", "99999"]
LONG = "x" * 5000
HOSTILE_VALUES = ["9" * 30, "-1", "ü名\x00", LONG, "abc", "1e309", "NaN", "../../etc/passwd"]
QUERY_NAMES = ["q", "sort", "page", "page_size", "status", "kind", "format", "task", "batch", "model", "models",
               "limit", "offset", "cursor", "search", "ordering", "next", "language", "k", "metric", "id", "ids",
               "annotator", "item", "run", "collection", "split", "seed", "n", "size", "top", "since"]
BODY_NAMES = ["name", "value", "values", "id", "task", "batch", "item", "kind", "language", "labels", "scale",
              "annotator", "annotators", "model", "models", "seed", "k", "n", "size", "comment", "reason",
              "status", "action", "text", "query", "password", "username", "email", "format", "file", "sample_size",
              "overlap", "priority", "instructions", "base_url", "batch_size", "timeout_seconds", "retry_failed"]


def url_for(text: str, value_of) -> str | None:
    """The route's text with each parameter replaced by value_of(name, converter); None when the pattern is a
    regular expression this cannot fill (optional groups, alternatives)."""
    def fill(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        return value_of(name, match.group(2) or "")

    url = PARAMETER.sub(fill, text)
    url = url.replace("^", "").replace("$", "").replace("\\Z", "").replace("\\.", ".").replace("/?", "/")
    if "(" in url or "[" in url or "*" in url or "+" in url:
        return None
    return "/" + url


def hostile_id_urls() -> list[str]:
    urls = set()
    for text, _ in routes():
        if "<" in text:
            for hostile in HOSTILE_IDS:
                url = url_for(text, lambda name, converter, h=hostile: h)
                if url:
                    urls.add(url)
    return sorted(urls)


def real_urls(rows: dict[str, Any]) -> list[str]:
    def value_of(name: str, converter: str) -> str:
        for key, value in rows.items():
            if name == key or name.startswith(key):
                return str(value)
        return str(rows["task"]) if converter in ("id", "int") or name == "pk" else "default"

    urls = {url for text, _ in routes() if (url := url_for(text, value_of))}
    return sorted(url for url in urls if "logout" not in url)


def hostile_queries() -> Iterator[str]:
    for value in ("9" * 30, "-1", "ü名\x00", LONG):
        yield "&".join(f"{name}={value}" for name in QUERY_NAMES)


def hostile_bodies() -> Iterator[tuple[Any, str | None]]:
    """(body, content type or None for a form)."""
    yield {name: HOSTILE_VALUES[i % len(HOSTILE_VALUES)] for i, name in enumerate(BODY_NAMES)}, None
    yield json.dumps({name: HOSTILE_VALUES[i % len(HOSTILE_VALUES)] for i, name in enumerate(BODY_NAMES)}), \
        "application/json"
    yield '{"value": ' + "[" * 10000 + "]" * 10000 + "}", "application/json"
    yield '{"value": ' + "9" * 5001 + ', "id": -1, "task": "abc"}', "application/json"
    yield b"\xff\xfe\x00 not utf-8 \xc3", "application/json"


def people(alice, carol, dave) -> list[tuple[str, User | None]]:
    return [("admin", carol), ("researcher", dave), ("annotator", alice.user), ("anonymous", None)]


def client_for(user: User | None) -> Client:
    client = Client(raise_request_exception=False)
    if user is not None:
        client.force_login(user)
    return client


def test_hostile_ids_in_every_route_for_every_role_get_no_server_error(alice, carol, dave, settings) -> None:
    settings.DEBUG = False
    batch_of("sts", [alice])
    urls = hostile_id_urls()
    assert len(urls) > 300
    failures = []
    for role, user in people(alice, carol, dave):
        client = client_for(user)
        for url in urls:
            for method in ("get", "post"):
                status = getattr(client, method)(url).status_code
                if status >= 500:
                    failures.append((role, method, url, status))
    assert failures == []


def test_hostile_queries_and_bodies_on_every_route_with_real_rows_get_no_server_error(
        alice, carol, dave, settings) -> None:
    settings.DEBUG = False
    batch = batch_of("sts", [alice])
    batch = Batch.objects.select_related("task").get(pk=batch.pk)
    item = batch.task.items.first()
    rows = {"task": batch.task_id, "batch": batch.pk, "item": item.pk, "annotator": alice.pk,
            "user": alice.user.pk, "pk": batch.task_id, "object_id": batch.task_id}
    urls = real_urls(rows)
    assert len(urls) > 150 and f"/annotate/b/{batch.pk}/" in urls
    failures = []
    for role, user in people(alice, carol, dave):
        client = client_for(user)
        for url in urls:
            for query in hostile_queries():
                status = client.get(f"{url}?{query}").status_code
                if status >= 500:
                    failures.append((role, "get", url, query[:40], status))
            for body, content_type in hostile_bodies():
                kwargs = {"content_type": content_type} if content_type else {}
                status = client.post(url, body, **kwargs).status_code
                if status >= 500:
                    failures.append((role, "post", url, str(body)[:40], status))
    assert failures == []


def test_a_nul_in_a_lists_search_is_dropped_instead_of_reaching_postgresql(carol, settings) -> None:
    """What the crawl found: `?q=` with a NUL byte was a 500 on /tasks/, /reports/, /manage/batches/ and
    /manage/annotators/ (PostgreSQL refuses NUL in text); the byte is dropped, the search still matches."""
    from tasks_app.models import Task

    settings.DEBUG = False
    Task.objects.create(name="alpha study", kind="sts", language="eng-Latn")
    Task.objects.create(name="beta study", kind="sts", language="eng-Latn")
    client = client_for(carol)
    page = client.get("/tasks/?q=al%00pha")
    assert page.status_code == 200
    assert "alpha study" in page.content.decode() and "beta study" not in page.content.decode()
