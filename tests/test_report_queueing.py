"""When reports run: after answers change (debounced, after commit), on demand, never inline, never twice
for the same answers."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from django.db import transaction
from django.test import Client
from django.urls import reverse

from agreement import signals
from agreement.core.reports import report_in_process, run_report
from agreement.models import Report
from annotation.models import Annotation
from hume.jobs.models import UnsentMessage
from tests.conftest import REPO, database_url_for_subprocess
from tests.report_builders import annotator_named, build_task, cli_report, import_answers, wait_for_report

BROKER_QUEUE = "celery"


def fresh_task(name: str, n_items: int):
    return build_task("classification", name, [{"text": f"t{i}", "label": "a"} for i in range(n_items)],
                      labels=["a", "b"])


def queued_messages() -> int:
    return signals.redis_client().llen(BROKER_QUEUE)


@pytest.fixture
def empty_queue():
    from hume.lib.celery_app import app

    app.control.purge()
    for key in signals.redis_client().scan_iter("hume:report-debounce:*"):
        signals.redis_client().delete(key)
    signals.forget_windows()
    yield
    app.control.purge()


@pytest.mark.django_db(transaction=True)
def test_a_thousand_submits_enqueue_one_report_job(empty_queue, settings) -> None:
    settings.REPORT_DEBOUNCE_SECONDS = 120
    task = fresh_task("thousand", 500)
    alice, bob = annotator_named("alice2"), annotator_named("bob2")

    for item in task.items.all():
        for who in (alice, bob):
            Annotation.objects.create(item=item, annotator=who, value="a")  # each commits on its own

    assert Annotation.objects.filter(item__task=task).count() == 1000
    assert queued_messages() == 1
    assert Report.objects.get(task=task).status == Report.Status.QUEUED


@pytest.mark.django_db(transaction=True)
def test_an_answer_rolled_back_queues_nothing(empty_queue, settings) -> None:
    settings.REPORT_DEBOUNCE_SECONDS = 120
    task = fresh_task("rolled-back", 1)

    with pytest.raises(RuntimeError), transaction.atomic():
        Annotation.objects.create(item=task.items.get(), annotator=annotator_named("carl"), value="a")
        raise RuntimeError("the submit failed after the insert")

    assert queued_messages() == 0 and not Report.objects.filter(task=task).exists()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_submitted_answers_are_reported_automatically_by_the_worker(start_worker, settings) -> None:
    settings.REPORT_DEBOUNCE_SECONDS = 1
    start_worker()
    task = fresh_task("automatic", 3)

    for item, value in zip(task.items.all(), ["a", "a", "b"], strict=True):
        Annotation.objects.create(item=item, annotator=annotator_named("dora"), value=value)
    report = wait_for_report(task)

    assert report.status == Report.Status.DONE and report.computed_in.startswith("worker")
    assert report.result["human"]["main_score"] == pytest.approx(2 / 3)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_an_answer_arriving_during_a_run_leads_to_one_more_run(start_worker, settings) -> None:
    settings.REPORT_DEBOUNCE_SECONDS = 0.6
    start_worker(report_pause=3)
    task = fresh_task("changed-meanwhile", 2)
    first, second = task.items.all()
    Annotation.objects.create(item=first, annotator=annotator_named("erin"), value="a")
    deadline = time.monotonic() + 60
    # wait until the first run has read its answers: an answer committed before that is part of it
    while not Report.objects.filter(task=task, status=Report.Status.RUNNING, progress__gte=25).exists():
        assert time.monotonic() < deadline, "the first run never read its answers"
        time.sleep(0.05)

    Annotation.objects.create(item=second, annotator=annotator_named("erin"), value="b")
    time.sleep(1)  # past the debounce: the second request lands while the first run is still sleeping
    report = wait_for_report(task, timeout=120)
    while report.status != Report.Status.DONE or report.computations < 2:
        assert time.monotonic() < deadline + 60, f"no second run: {report.status}, {report.computations}"
        time.sleep(0.2)
        report.refresh_from_db()

    assert report.computations == 2 and report.result["n_answers"] == 2


@pytest.mark.django_db
def test_the_same_answers_are_never_scored_twice() -> None:
    task = fresh_task("digest", 2)
    import_answers(task, [{"item": "1", "annotator": "fred", "value": "a"},
                          {"item": "2", "annotator": "fred", "value": "b"}])
    report_in_process(task)
    stored = Report.objects.get(task=task)

    Report.objects.filter(task=task).update(status=Report.Status.QUEUED)
    outcome = run_report(task.pk, claimed_by="message-1", computed_in="test")
    again = cli_report(task)

    report = Report.objects.get(task=task)
    assert outcome == "unchanged" and "stored" in again["_cli_said"]
    assert (report.computations, report.attempts, report.answers_digest) == (1, 2, stored.answers_digest)


@pytest.mark.django_db
def test_a_changed_answer_changes_the_digest_and_is_scored_again() -> None:
    task = fresh_task("digest-change", 2)
    import_answers(task, [{"item": "1", "annotator": "gina", "value": "a"},
                          {"item": "2", "annotator": "gina", "value": "b"}])
    report_in_process(task)
    before = Report.objects.get(task=task)

    Annotation.objects.filter(item__task=task, item__external_id="2").update(value="a")
    Report.objects.filter(task=task).update(status=Report.Status.QUEUED)
    outcome = run_report(task.pk, claimed_by="message-2", computed_in="test")

    after = Report.objects.get(task=task)
    assert outcome == "computed" and after.computations == 2
    assert after.answers_digest != before.answers_digest and len(after.answers_digest) == 64
    assert after.result["human"]["main_score"] == 1.0


@pytest.mark.django_db
def test_a_flag_alone_makes_the_stored_report_stale() -> None:
    """The report counts flags, so a flag on an answer whose value did not change is scored again."""
    task = fresh_task("flag-change", 2)
    import_answers(task, [{"item": "1", "annotator": "ivy", "value": "a"},
                          {"item": "2", "annotator": "ivy", "value": "b"}])
    report_in_process(task)
    before = Report.objects.get(task=task)
    assert before.result["n_flagged"] == 0

    Annotation.objects.filter(item__task=task, item__external_id="2").update(flagged=True, flag_comment="odd")
    Report.objects.filter(task=task).update(status=Report.Status.QUEUED)
    outcome = run_report(task.pk, claimed_by="message-3", computed_in="test")

    after = Report.objects.get(task=task)
    assert outcome == "computed" and after.computations == 2 and after.result["n_flagged"] == 1
    assert after.answers_digest == before.answers_digest and after.inputs_digest != before.inputs_digest


@pytest.mark.django_db
def test_a_message_for_a_report_nobody_queued_does_nothing() -> None:
    task = fresh_task("not-queued", 1)
    import_answers(task, [{"item": "1", "annotator": "hal", "value": "a"}])
    report_in_process(task)

    outcome = run_report(task.pk, claimed_by="stray-message", computed_in="test")

    assert outcome == "not claimed: report is done"
    assert Report.objects.get(task=task).attempts == 1


DEAD_BROKER_SCRIPT = """
import json, django
django.setup()
from django.contrib.auth.models import User
from django.test import Client
from annotation.models import Annotation, Annotator
from tasks_app.models import Task, Item
client = Client()
client.force_login(User.objects.get(username="dave"))
task = Task.objects.get(name="dead-broker")
page = client.post(f"/reports/task/{task.pk}/recompute/", HTTP_HX_REQUEST="true")
api = client.post(f"/api/v1/reports/{task.pk}/compute/")
saved = Annotation.objects.create(item=Item.objects.get(task=task, external_id="2"),
                                  annotator=Annotator.objects.get(user__username="ivy"), value="b")
print(json.dumps({"page": page.content.decode(), "api_status": api.status_code, "api": api.json(), "saved": saved.pk}))
"""


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_broker_is_said_at_once_the_report_stays_queued_and_nothing_runs_inline(dave) -> None:
    task = fresh_task("dead-broker", 2)
    import_answers(task, [{"item": "1", "annotator": "ivy", "value": "a"}])
    env = {**os.environ, "DATABASE_URL": database_url_for_subprocess(), "REDIS_URL": "redis://127.0.0.1:9/0"}

    done = subprocess.run([sys.executable, "-c", DEAD_BROKER_SCRIPT], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)

    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert "queued, the broker is down" in out["page"] and 'role="alert"' in out["page"]
    assert out["api_status"] == 202 and "queued, the broker is down" in out["api"]["error"]
    assert out["api"]["status"] == "queued"
    assert Annotation.objects.filter(pk=out["saved"]).exists()  # the annotator's answer is kept
    report = Report.objects.get(task=task)
    # stored and queued, its message kept in the job layer's outbox for the beat (issue 35, item 5)
    assert report.status == Report.Status.QUEUED and report.error == ""
    assert (report.result, report.computations) == (None, 0)
    assert UnsentMessage.objects.filter(task="agreement.compute_report", args=[task.pk]).count() == 2
    page = Client()
    page.force_login(dave)
    assert "queued" in page.get(reverse("agreement:detail", kwargs={"task_id": task.pk})).content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_api_and_the_button_queue_a_report_for_a_worker(empty_queue, dave, carol) -> None:
    task = fresh_task("on-demand", 1)
    import_answers(task, [{"item": "1", "annotator": "jo", "value": "a"}])
    api, page = Client(), Client()
    api.force_login(dave)
    page.force_login(carol)  # admins may do what researchers do

    answer = api.post(reverse("api-report-compute", kwargs={"task_id": task.pk}))
    fragment = page.post(reverse("agreement:recompute", kwargs={"task_id": task.pk}), HTTP_HX_REQUEST="true")

    assert answer.status_code == 202 and answer.json()["status"] == "queued"
    assert fragment.status_code == 200 and 'hx-trigger="every 1s"' in fragment.content.decode()
    assert queued_messages() == 2  # two requests, two messages: the first worker to claim runs, the other returns
    assert Report.objects.get(task=task).status == Report.Status.QUEUED


@pytest.mark.django_db(transaction=True)
def test_an_annotation_import_schedules_one_report_after_it_commits(empty_queue, settings, tmp_path) -> None:
    settings.REPORT_DEBOUNCE_SECONDS = 120
    task = fresh_task("imported", 3)
    rows = [{"item": ext, "annotator": who, "annotator_agent": "human", "value": "a"}
            for ext in task.items.values_list("external_id", flat=True) for who in ("ext-1", "ext-2")]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    from django.core.management import call_command

    call_command("import_annotations", str(path), "--task", task.name, stdout=open(os.devnull, "w"))

    assert Annotation.objects.filter(item__task=task).count() == 6
    assert queued_messages() == 1
    assert Report.objects.get(task=task).status == Report.Status.QUEUED


@pytest.mark.django_db(transaction=True)
def test_a_task_with_an_open_crowd_study_waits_the_longer_crowd_window(empty_queue, settings) -> None:
    """Issue 36: a crowd study's report runs once per CROWD_REPORT_DEBOUNCE_SECONDS (60 s), not every 10 s; a task
    without a study, or whose study is closed, keeps REPORT_DEBOUNCE_SECONDS."""
    from annotation.crowd.models import StudyLink
    from tests.crowd_helpers import make_crowd_task, make_study

    settings.REPORT_DEBOUNCE_SECONDS = 10
    settings.CROWD_REPORT_DEBOUNCE_SECONDS = 60
    link = make_study(make_crowd_task("CrowdWindow", n=4))
    plain = fresh_task("plain-window", 1)
    crowd_items = list(link.batch.task.items.order_by("pk"))
    Annotation.objects.create(item=crowd_items[0], annotator=annotator_named("fay"), value="positive")
    Annotation.objects.create(item=plain.items.get(), annotator=annotator_named("fay"), value="a")
    client = signals.redis_client()
    assert 59_000 <= client.pttl(signals.debounce_key(link.batch.task_id)) <= 59_500
    assert 9_000 <= client.pttl(signals.debounce_key(plain.pk)) <= 9_500
    assert queued_messages() == 2
    StudyLink.objects.filter(pk=link.pk).update(is_open=False)
    client.delete(signals.debounce_key(link.batch.task_id))
    signals.forget_windows()
    Annotation.objects.create(item=crowd_items[1], annotator=annotator_named("fay"), value="positive")
    assert 9_000 <= client.pttl(signals.debounce_key(link.batch.task_id)) <= 9_500
