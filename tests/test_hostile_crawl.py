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
from django.core.exceptions import ValidationError
from django.test import Client

from annotation.llm.models import LLMAnnotatorConfig
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


# --- one hostile field at a time, the rest valid (issue 35, item 3) -----------------------------------------------
# A body of hostile values in every field is refused by the first check a form makes, so the crawl above never
# reached a number that passes the form and overflows at the database (calibration 10^30, min_seconds 2^63). Here
# each form gets a valid body with one field replaced at a time; the valid body is posted last and must be stored.

HOSTILE_NUMBERS = [str(10**30), str(2**63), str(2**31), "-5", "nan", "inf", "-inf", "1e308", "1e-320", "9" * 5001,
                   "ü名\x00", " ", "1,5", "0x10"]


def one_field_at_a_time(client: Client, url: str, valid: dict[str, Any],
                        stored: Any) -> tuple[list[tuple[str, str, int | str]], set[tuple[str, str]]]:
    """(field, value, what went wrong) for each hostile value of each field that got a 5xx or was echoed whole,
    and the (field, value) pairs that were stored (each such row deleted again, so each post is counted alone)."""
    failures, accepted = [], set()
    for field in valid:
        for value in HOSTILE_NUMBERS:
            response = client.post(url, {**valid, field: value})
            if response.status_code >= 500:
                failures.append((field, value[:40], response.status_code))
            elif "9" * 1000 in response.content.decode(errors="replace"):  # cut to the field's max_length or 40
                failures.append((field, value[:40], "echoed whole"))
            for row in stored.all():
                accepted.add((field, value))
                try:
                    row.full_clean()  # a stored row holds what the model's validators allow
                except ValidationError as invalid:
                    failures.append((field, value[:40], f"stored invalid: {invalid.messages[0][:60]}"))
                (row.annotator.user if isinstance(row, LLMAnnotatorConfig) else row).delete()
    return failures, accepted


@pytest.mark.usefixtures("local_llm_endpoints")
def test_each_field_of_the_number_forms_alone_gets_no_server_error_and_stores_nothing(carol, dave, settings) -> None:
    from agreement.escalation.models import EscalationPlan
    from annotation.crowd.models import StudyLink
    from tests.batch_helpers import make_batch
    from tests.crowd_helpers import make_crowd_task
    from tests.test_escalation_page import study
    from tests.test_llm_config import FORM as LLM_FORM

    settings.DEBUG = False
    task = study()
    escalation = {"task": str(task.pk), "judges": "small", "alpha": "0.15", "delta": "0.1", "calibration": "30",
                  "epsilon": "0.2", "tolerance": ""}
    batch = make_batch(make_crowd_task(n=3))
    link = {"quota": "2", "minutes": "10", "completion_code": "XYZ", "platform": "prolific", "gold_rate": "0",
            "min_seconds": "0", "straightline_run": "0", "practice_failures_allowed": "1", "consent": ""}
    # In range, so stored: a tiny α, δ or ε and a large tolerance are finite numbers in their range (a tolerance
    # on a label task then fails in the worker, with the reason); blanks take the defaults; a consent is free text.
    in_range = {
        "/escalation/": {("epsilon", "1e-320"), ("alpha", "1e-320"), ("delta", "1e-320"), ("epsilon", " "),
                         ("calibration", " ")} | {("tolerance", value) for value in (
                             str(10**30), str(2**63), str(2**31), "1e308", "1e-320", " ")},
        "link": {("consent", value) for value in HOSTILE_NUMBERS} | {("gold_rate", "1e-320")}
        | {("completion_code", value) for value in HOSTILE_NUMBERS if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", value)},
        "llm": None,  # names, model names: text; every stored row passes its validators (one_field_at_a_time)
    }
    forms = [(dave, "/escalation/", escalation, EscalationPlan.objects, in_range["/escalation/"]),
             (carol, f"/manage/studies/new/{batch.pk}/", link, StudyLink.objects, in_range["link"]),
             (carol, "/llm/annotators/new/", LLM_FORM,
              LLMAnnotatorConfig.objects.exclude(annotator__user__username="small"), in_range["llm"])]
    for user, url, valid, stored, expected in forms:
        client = client_for(user)
        failures, accepted = one_field_at_a_time(client, url, valid, stored)
        assert failures == [], url
        assert expected is None or accepted <= expected, (url, accepted - expected)  # nothing out of range stored
        assert client.post(url, valid).status_code == 302 and stored.count() == 1, url  # the baseline is valid
