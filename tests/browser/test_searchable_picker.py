"""In a real browser: the batch form's searchable annotator picker (static/manage/picker.js) and the language
suggestions (<datalist>), reached from the task page's "Create a batch" action (issue 14 item 11)."""
from __future__ import annotations

import pytest

from annotation.models import Batch
from tasks_app.models import Task
from tests.conftest import make_annotator

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_an_admin_types_part_of_a_name_picks_it_and_creates_the_batch(logged_in_page, live_server, carol, alice,
                                                                      bob) -> None:
    make_annotator("amir", {"ara-Arab": "native"})
    task = Task.objects.create(name="reviews", kind="classification", language="eng-Latn", labels=["neg", "pos"])
    page = logged_in_page("carol")
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text) if message.type == "error" else None)
    page.goto(f"{live_server.url}/tasks/{task.pk}/")
    page.click("#create-batch")
    page.wait_for_url(f"{live_server.url}/manage/batches/new/?task={task.pk}")
    assert page.locator("#id_task").input_value() == str(task.pk)

    assert page.locator("#id_language").get_attribute("list") == "language-codes"
    codes = page.locator("#language-codes option").evaluate_all("options => options.map(o => o.value)")
    assert codes == ["ara-Arab", "dan-Latn", "eng-Latn"]  # alice's, bob's (amir's) and the task's languages
    page.fill("#id_language", "dan-Latn")

    search = page.locator("input.picker-search")
    search.fill("ali")
    shown = page.locator("#id_annotators option:not([hidden])")
    assert shown.count() == 1 and shown.first.inner_text().startswith("alice [human]")
    search.press("Enter")  # adds alice, does not submit
    assert page.url.endswith(f"/manage/batches/new/?task={task.pk}")
    assert page.locator(".picker-chosen").inner_text() == "Chosen: alice"
    assert search.input_value() == "" and page.locator("#id_annotators option:not([hidden])").count() == 3

    page.click("button.primary")
    page.wait_for_url(f"{live_server.url}/manage/batches/*/")
    batch = Batch.objects.get(task=task)
    assert (batch.language, [a.name for a in batch.assignees.all()]) == ("dan-Latn", ["alice"])
    assert page.url == f"{live_server.url}/manage/batches/{batch.pk}/"
    assert not console, console
