"""Long lists search and sort on the server (issue 14 item 11): `?q=` filters, `?sort=` orders by a whitelisted
key (`-key` descending), an unknown key falls back to the default, and the table headers are the sort links."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from agreement.models import Report
from annotation.core.batches import BatchSpec, create_batch
from tasks_app.models import Task
from tests.conftest import make_annotator

pytestmark = pytest.mark.django_db


def client_of(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def column(html: str, table_id: str, cell: int = 0) -> list[str]:
    """The text of one cell of each body row of the table."""
    body = html.split(f'id="{table_id}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body, re.S)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S) for row in rows]
    return [" ".join(re.sub(r"<[^>]+>", " ", c[cell]).split()) for c in cells if len(c) > cell]


@pytest.fixture
def tasks() -> list[Task]:
    return [Task.objects.create(name=name, kind=kind, language=language) for name, kind, language in [
        ("sts-danish", "sts", "dan-Latn"), ("arabic sentiment", "classification", "ara-Arab"),
        ("clusters", "clustering", "eng-Latn"), ("STS english", "sts", "eng-Latn")]]


def test_the_task_list_filters_by_q_and_sorts_by_a_header(dave, tasks) -> None:
    client = client_of(dave)
    assert column(client.get("/tasks/").content.decode(), "task-list") == [
        "arabic sentiment", "clusters", "STS english", "sts-danish"]  # default: by name
    assert column(client.get("/tasks/?q=sts").content.decode(), "task-list") == ["STS english", "sts-danish"]
    assert column(client.get("/tasks/?q=ara-arab").content.decode(), "task-list") == ["arabic sentiment"]
    by_language = client.get("/tasks/?sort=-language").content.decode()
    assert column(by_language, "task-list", 2) == ["eng-Latn", "eng-Latn", "dan-Latn", "ara-Arab"]
    assert column(by_language, "task-list")[:2] == ["STS english", "clusters"]  # ties by name, also reversed
    assert '<th aria-sort="descending"><a href="?sort=language">Language ▼</a></th>' in by_language
    assert '<a href="?q=sts&amp;sort=kind">Kind</a>' in client.get("/tasks/?q=sts").content.decode()
    nothing = client.get("/tasks/?q=zzz").content.decode()
    assert "No task matches “zzz”." in nothing


def test_an_unknown_sort_key_falls_back_to_the_default_order(dave, tasks) -> None:
    html = client_of(dave).get("/tasks/?sort=payload").content.decode()
    assert column(html, "task-list") == ["arabic sentiment", "clusters", "STS english", "sts-danish"]
    assert '<th aria-sort="ascending"><a href="?sort=-name">Name ▲</a></th>' in html


def test_the_annotator_list_filters_by_language_and_sorts_by_state(carol) -> None:
    for name, languages in [("zoe", {"dan-Latn": "native"}), ("amir", {"ara-Arab": "native"}),
                            ("mia", {"eng-Latn": "native", "dan-Latn": "fluent"})]:
        make_annotator(name, languages)
    client = client_of(carol)
    client.post(f"/manage/annotators/{make_annotator('ben', {}).pk}/active/", {"active": "0"})
    assert column(client.get("/manage/annotators/").content.decode(), "annotators") == ["amir", "ben", "mia", "zoe"]
    assert column(client.get("/manage/annotators/?q=dan").content.decode(), "annotators") == ["mia", "zoe"]
    assert column(client.get("/manage/annotators/?sort=-state").content.decode(), "annotators")[0] == "ben"


def test_the_batch_list_filters_by_task_and_sorts_by_language_keeping_the_state_filter(carol, tasks) -> None:
    for task in tasks:
        create_batch(BatchSpec(task=task, language=task.language, overlap=1, name=f"{task.name} batch"),
                     annotators=[], override_reason="", created_by=carol)
    client = client_of(carol)
    html = client.get("/manage/batches/?q=sts&sort=language&state=open").content.decode()
    names = [line.split(" ")[0] for line in column(html, "batch-overview")]
    assert names == ["sts-danish", "STS"]  # dan-Latn before eng-Latn
    assert 'hx-get="/manage/batches/?q=sts&amp;sort=language&amp;state=open"' in html  # the poll keeps them
    assert '<a href="?state=open&amp;q=sts&amp;sort=-language">Language ▲</a>' in html


def test_the_report_list_filters_and_sorts_by_status(dave, tasks) -> None:
    Report.objects.create(task=tasks[0], status=Report.Status.FAILED, error="boom")
    Report.objects.create(task=tasks[2], status=Report.Status.DONE)
    client = client_of(dave)
    assert column(client.get("/reports/?q=STS").content.decode(), "report-list") == ["STS english", "sts-danish"]
    by_status = column(client.get("/reports/?sort=status").content.decode(), "report-list", 3)
    assert by_status[:2] == ["done", "failed boom"]
