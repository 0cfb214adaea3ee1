"""The task page offers what the CLI does (issue 14 item 11): sample a subset, edit the instructions with their
Markdown preview, create a batch, export the human results to MTEB. Admins change; researchers read and export;
annotators reach none of it."""
from __future__ import annotations

import html
import io
import json
import re
import zipfile

import pytest
from django.test import Client

from annotation.models import Batch
from tasks_app.models import Item, Task
from tasks_app.sampling import choose
from tests.report_builders import answers_from_columns, build_task, cli_report, import_answers

pytestmark = pytest.mark.django_db
LABELS = ["neg", "pos"]


def ten_items() -> Task:
    return build_task("classification", "reviews", [{"text": f"text {i}", "label": LABELS[i % 2]} for i in range(10)],
                      labels=LABELS)


def as_user(user) -> Client:  # type: ignore[no-untyped-def]
    client = Client()
    client.force_login(user)
    return client


def page_text(response) -> str:  # type: ignore[no-untyped-def]
    return html.unescape(re.sub(r"\s+", " ", response.content.decode()))


def test_an_admin_samples_a_subset_from_the_task_page_as_the_command_would(carol) -> None:
    task = ten_items()
    client = as_user(carol)
    assert f'action="/tasks/{task.pk}/sample/"' in client.get(f"/tasks/{task.pk}/").content.decode()

    response = client.post(f"/tasks/{task.pk}/sample/", {"size": "4", "seed": "7"}, follow=True)

    task.refresh_from_db()
    assert (task.sample_size, task.sample_seed) == (4, 7)
    rows = [(i.pk, i.external_id, i.gold.value) for i in Item.objects.filter(task=task).select_related("gold")]
    assert set(Item.objects.filter(task=task, in_sample=True).values_list("pk", flat=True)) == choose(rows, 4, 7)
    assert "sampled 4 items of task 'reviews' with seed 7 (stratified by gold label)" in page_text(response)
    assert '<td id="sample">4 items (seed 7)</td>' in page_text(response)


def test_a_sample_without_a_seed_changes_nothing_and_says_what_is_missing(carol) -> None:
    task = ten_items()
    before = list(Item.objects.filter(in_sample=True).values_list("pk", flat=True))
    response = as_user(carol).post(f"/tasks/{task.pk}/sample/", {"size": "4"}, follow=True)
    assert "Sample not changed: Give a size and a seed, or tick “Clear the sample”." in page_text(response)
    assert Task.objects.get(pk=task.pk).sample_size is None
    assert list(Item.objects.filter(in_sample=True).values_list("pk", flat=True)) == before


def test_only_admins_sample_or_edit_instructions(dave, alice) -> None:
    task = ten_items()
    researcher = as_user(dave)
    assert researcher.post(f"/tasks/{task.pk}/sample/", {"size": "4", "seed": "7"}).status_code == 403
    assert researcher.get(f"/tasks/{task.pk}/instructions/").status_code == 403
    assert researcher.post(f"/tasks/{task.pk}/instructions/", {"instructions": "x", "save": "1"}).status_code == 403
    assert as_user(alice.user).post(f"/tasks/{task.pk}/sample/", {"size": "4", "seed": "7"}).status_code == 404
    assert Task.objects.get(pk=task.pk).sample_size is None and Task.objects.get(pk=task.pk).instructions == ""
    detail = researcher.get(f"/tasks/{task.pk}/").content.decode()
    assert 'id="sample-form"' not in detail and 'id="edit-instructions"' not in detail and 'id="export-mteb"' in detail


def test_a_sample_form_needs_its_csrf_token(carol) -> None:
    task = ten_items()
    client = Client(enforce_csrf_checks=True)
    client.force_login(carol)
    assert client.post(f"/tasks/{task.pk}/sample/", {"size": "4", "seed": "7"}).status_code == 403
    assert Task.objects.get(pk=task.pk).sample_size is None


TABLE = "Pick the **sentiment**.\n\n| label | when |\n|---|---|\n| pos | praise |\n"


def test_an_admin_previews_then_saves_instructions_rendered_as_annotators_see_them(carol) -> None:
    task = ten_items()
    client = as_user(carol)
    assert f'href="/tasks/{task.pk}/instructions/"' in client.get(f"/tasks/{task.pk}/").content.decode()

    preview = client.post(f"/tasks/{task.pk}/instructions/", {"instructions": TABLE, "preview": "1"})
    assert preview.status_code == 200
    assert "<strong>sentiment</strong>" in preview.content.decode() and "<td>praise</td>" in preview.content.decode()
    assert Task.objects.get(pk=task.pk).instructions == ""  # a preview saves nothing

    saved = client.post(f"/tasks/{task.pk}/instructions/", {"instructions": TABLE, "save": "1"}, follow=True)
    assert Task.objects.get(pk=task.pk).instructions == TABLE
    assert "Instructions saved." in page_text(saved) and "<td>praise</td>" in saved.content.decode()


def test_instructions_over_the_limit_are_refused_and_not_saved(carol) -> None:
    task = ten_items()
    response = as_user(carol).post(f"/tasks/{task.pk}/instructions/", {"instructions": "x" * 100_001, "save": "1"})
    assert response.status_code == 400
    assert "Ensure this value has at most 100000 characters (it has 100001)." in response.content.decode()
    assert Task.objects.get(pk=task.pk).instructions == ""


def test_an_admin_creates_a_batch_of_the_task_from_its_page(carol, alice, bob) -> None:
    task = ten_items()
    client = as_user(carol)
    link = re.search(r'href="([^"]+)" id="create-batch"', client.get(f"/tasks/{task.pk}/").content.decode()).group(1)
    form = client.get(link.replace("&amp;", "&")).content.decode()
    assert f'<option value="{task.pk}" selected>reviews (classification, eng-Latn)</option>' in form

    response = client.post(link, {"task": task.pk, "language": "dan-Latn", "overlap": "1", "hold_minutes": "15",
                                  "annotators": [alice.pk]})

    batch = Batch.objects.get(task=task)
    assert response.status_code == 302 and response["Location"] == f"/manage/batches/{batch.pk}/"
    assert (batch.language, batch.overlap, [a.name for a in batch.assignees.all()]) == ("dan-Latn", 1, ["alice"])


def test_the_mteb_export_downloads_the_commands_files_as_a_zip(dave, alice) -> None:
    task = build_task("sts", "sts12-sample", [{"sentence1": f"a{i}", "sentence2": f"b{i}", "score": s}
                                             for i, s in enumerate([0.5, 2, 3.5, 5, 1])], mteb_task_name="HUMESTS12")
    client = as_user(dave)
    missing = client.get(f"/reports/task/{task.pk}/mteb.zip")
    assert missing.status_code == 302 and missing["Location"] == f"/reports/task/{task.pk}/"
    assert "has no stored report yet: it is queued below" in page_text(client.get(missing["Location"]))
    import_answers(task, answers_from_columns({"ann1": [1, 2, 3, 4, 0.5], "ann2": [0, 2.5, 3, 5, 1.5]}))
    cli_report(task)  # stores the report, as a worker would

    response = client.get(f"/reports/task/{task.pk}/mteb.zip")

    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    assert response["Content-Disposition"] == 'attachment; filename="mteb-sts12-sample.zip"'
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = sorted(archive.namelist())
    aggregate = [n for n in names if "/annotator_" not in n]
    assert [n.split("/", 2)[2] for n in aggregate] == ["HUMESTS12.json", "model_meta.json"]
    assert all(n.startswith("hume__Human/") for n in names) and len(names) == 2 + 2 * 2  # + two annotator folders
    result = json.loads(archive.read(aggregate[0]))
    assert result["task_name"] == "HUMESTS12" and len(result["scores"]["test"][0]["scores_per_experiment"]) == 2
    assert as_user(alice.user).get(f"/reports/task/{task.pk}/mteb.zip").status_code == 403
