"""The task pages: list and detail with counts, gold for admins only, safe instructions, escaped text, upload."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

from annotation.models import Batch, BatchAssignee
from tasks_app.models import Task
from tasks_app.sampling import sample_task
from tests.import_samples import cli_import, counts, jsonl, upload, write

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert('pwned')</script>"


@pytest.fixture
def sts_task(tmp_path: Path) -> Task:
    records = [{"id": f"s{i}", "sentence1": f"first {i}", "sentence2": f"second {i}", "score": 4.2} for i in range(25)]
    records.append({"id": "evil", "sentence1": SCRIPT, "sentence2": '<img src=x onerror="alert(1)">', "score": 1.5})
    cli_import(write(tmp_path / "sts.jsonl", jsonl(records)), "STS en", "sts")
    return Task.objects.get(name="STS en")


def page(client: Client, url: str, status: int = 200) -> str:
    response = client.get(url)
    assert response.status_code == status
    return response.content.decode()


def test_the_list_shows_items_gold_and_sample_size(client: Client, carol, sts_task: Task) -> None:
    sample_task(sts_task, 10, seed=3)
    client.force_login(carol)
    body = page(client, "/tasks/")
    assert f'<a href="/tasks/{sts_task.pk}/">STS en</a>' in body
    assert '<td class="n-items">26</td>' in body
    assert '<td class="n-gold">26</td>' in body
    assert '<td class="sample-size">10 (seed 3)</td>' in body
    assert 'href="/tasks/import/"' in body


def test_admins_see_gold_in_the_item_preview(client: Client, carol, sts_task: Task) -> None:
    client.force_login(carol)
    body = page(client, f"/tasks/{sts_task.pk}/")
    assert "<th>Gold</th>" in body
    assert '<td class="gold"><code>4.2</code></td>' in body


def test_researchers_see_items_but_never_gold(client: Client, dave, sts_task: Task) -> None:
    client.force_login(dave)
    body = page(client, f"/tasks/{sts_task.pk}/")
    assert "first 0" in body
    assert "Gold" not in body and 'class="gold"' not in body and "4.2" not in body
    assert 'href="/tasks/import/"' not in body


def test_annotators_see_only_their_tasks_without_items(client: Client, alice, bob, sts_task: Task,
                                                       tmp_path: Path) -> None:
    cli_import(write(tmp_path / "o.jsonl", jsonl([{"text": "other"}])), "Other", "classification", labels="x")
    batch = Batch.objects.create(task=sts_task, name="b1", language="eng-Latn")
    BatchAssignee.objects.create(batch=batch, annotator=alice)
    client.force_login(alice.user)
    listing = page(client, "/tasks/")
    assert "STS en" in listing and "Other" not in listing
    detail = page(client, f"/tasks/{sts_task.pk}/")
    assert "Instructions" in detail and "first 0" not in detail and "4.2" not in detail
    page(client, f"/tasks/{Task.objects.get(name='Other').pk}/", status=404)
    client.force_login(bob.user)
    assert "STS en" not in page(client, "/tasks/")
    page(client, f"/tasks/{sts_task.pk}/", status=404)


def test_item_text_is_escaped_on_every_task_page(client: Client, carol, sts_task: Task) -> None:
    client.force_login(carol)
    body = page(client, f"/tasks/{sts_task.pk}/?page=2")
    assert SCRIPT not in body and "<img src=x" not in body
    assert "&lt;script&gt;alert(&#x27;pwned&#x27;)&lt;/script&gt;" in body
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in body


def test_instructions_render_markdown_without_script(client: Client, dave, sts_task: Task) -> None:
    sts_task.instructions = ("# Rate the pair\n\n**0** unrelated, *5* same.\n\n" + SCRIPT +
                             '\n\n[click](javascript:alert(1)) <a href="https://x.example" onclick="evil()">x</a>')
    sts_task.save()
    client.force_login(dave)
    body = page(client, f"/tasks/{sts_task.pk}/")
    assert "<h1>Rate the pair</h1>" in body
    assert "<strong>0</strong> unrelated, <em>5</em> same." in body
    assert SCRIPT not in body and "javascript:" not in body and "onclick" not in body


def test_item_pages_come_as_an_htmx_fragment(client: Client, carol, sts_task: Task) -> None:
    client.force_login(carol)
    full = client.get(f"/tasks/{sts_task.pk}/")
    fragment = client.get(f"/tasks/{sts_task.pk}/?page=2", HTTP_HX_REQUEST="true")
    assert "HX-Request" in full["Vary"] and "HX-Request" in fragment["Vary"]
    body = fragment.content.decode()
    assert body.lstrip().startswith("<div id=\"items\"") and "<html" not in body
    assert "page 2 of 2" in body and "first 20" in body and "first 0" not in body
    assert 'href="?page=1" hx-get="?page=1"' in body


def test_arabic_item_text_takes_its_own_direction(client: Client, carol, tmp_path: Path) -> None:
    cli_import(write(tmp_path / "a.jsonl", jsonl([{"text": "الخدمة ممتازة", "label": "positive"}])), "Ara",
               "classification", language="ara-Arab")
    client.force_login(carol)
    body = page(client, f"/tasks/{Task.objects.get(name='Ara').pk}/")
    assert '<div class="text-box item-text" dir="auto">الخدمة ممتازة</div>' in body


def test_only_admins_reach_the_upload_page(client: Client, alice, dave, carol) -> None:
    for user in (alice.user, dave):
        client.force_login(user)
        assert client.get("/tasks/import/").status_code == 403
        assert client.post("/tasks/import/", {"file": upload("x.jsonl", b'{"text": "a"}\n')}).status_code == 403
    client.force_login(carol)
    body = page(client, "/tasks/import/")
    assert 'name="file"' in body and 'name="labels"' in body and 'name="update_gold"' in body


def test_an_upload_redirects_to_the_task_with_the_summary(client: Client, carol) -> None:
    client.force_login(carol)
    response = client.post("/tasks/import/", {
        "file": upload("s.jsonl", jsonl([{"text": "a", "label": "x"}, {"text": "b", "label": "y"}])),
        "name": "Up", "kind": "classification", "language": "eng-Latn", "instructions": "Choose *one*."}, follow=True)
    task = Task.objects.get(name="Up")
    assert response.redirect_chain == [(f"/tasks/{task.pk}/", 302)]
    body = response.content.decode()
    assert "created task &#x27;Up&#x27; (classification, eng-Latn)" in body
    assert "2 added (2 with gold), 0 unchanged" in body
    assert "Choose <em>one</em>." in body


def test_django_admin_has_an_import_page_using_the_same_import(client: Client, carol) -> None:
    carol.is_staff = True
    carol.save()
    client.force_login(carol)
    assert 'href="/admin/tasks_app/task/import/"' in page(client, "/admin/tasks_app/task/")
    assert 'name="file"' in page(client, "/admin/tasks_app/task/import/")
    before = counts()
    bad = client.post("/admin/tasks_app/task/import/", {"file": upload("b.jsonl", b'{"text": 1}\n'), "name": "A",
                                                        "kind": "classification", "language": "eng-Latn",
                                                        "labels": "x"})
    assert bad.status_code == 400 and 'b.jsonl line 1, field &quot;text&quot;: must be a string' in bad.content.decode()
    assert counts() == before
    good = client.post("/admin/tasks_app/task/import/", {"file": upload("g.jsonl", b'{"text": "t"}\n'), "name": "A",
                                                         "kind": "classification", "language": "eng-Latn",
                                                         "labels": "x"})
    task = Task.objects.get(name="A")
    assert good.status_code == 302 and good["Location"] == f"/admin/tasks_app/task/{task.pk}/change/"


def test_the_admin_import_page_is_refused_to_staff_without_the_permission(client: Client, dave) -> None:
    dave.is_staff = True
    dave.save()
    client.force_login(dave)
    assert client.get("/admin/tasks_app/task/import/").status_code == 403
