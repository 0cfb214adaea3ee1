"""A results page never computes a report: it queues the missing one for a worker and updates itself.

A mapped task whose answers were bulk-imported (no signal, so no report yet) is opened on the per-task
comparison page. The GET stores nothing but a queued report row and sends exactly one job; the page shows
the task as being computed with a part that polls itself; a real worker then computes the report and the
page shows the human score (HUME protocol: majority vote, 4 of 5 items right → 0.8).
"""
from __future__ import annotations

import pytest
from django.test import Client

from agreement import signals
from agreement.models import Report
from tests.report_builders import answers_from_columns, build_task, import_answers, wait_for_report

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]
PAGE = "/results/tasks/HUMEEmotionClassification/?lang=eng-Latn"


def queued_messages() -> int:
    return signals.redis_client().llen("celery")


def test_a_results_page_queues_one_report_and_shows_its_scores_once_a_worker_stored_it(start_worker, dave):
    task = build_task("classification", "emotion", [{"text": f"t{i}", "label": "a"} for i in range(5)],
                      labels=["a", "b"], mteb_task_name="HUMEEmotionClassification", mteb_subset="default")
    import_answers(task, answers_from_columns({"ann1": ["a", "a", "a", "a", "b"], "ann2": ["a", "a", "a", "b", "b"]}))
    client = Client()
    client.force_login(dave)

    first, second = client.get(PAGE), client.get(PAGE)

    report = Report.objects.get(task=task)
    assert (report.status, report.result, report.computations, report.attempts) == ("queued", None, 0, 0)
    assert queued_messages() == 1  # two page views, one job
    html = second.content.decode()
    assert f'hx-get="/results/pending/?task={task.pk}"' in html and "queued: a worker will compute it" in html
    assert first.context["mappings"]["project"][0]["origin"] == "no stored report yet: being computed"
    assert "No human scores to compare" in html
    waiting = client.get(f"/results/pending/?task={task.pk}", HTTP_HX_REQUEST="true")
    assert "HX-Refresh" not in waiting and 'hx-trigger="every 1s"' in waiting.content.decode()

    start_worker()
    report = wait_for_report(task)
    done = client.get(f"/results/pending/?task={task.pk}", HTTP_HX_REQUEST="true")
    page = client.get(PAGE)

    assert (report.status, report.computations, report.computed_in[:6]) == ("done", 1, "worker")
    assert done["HX-Refresh"] == "true"  # the waiting part reloads the page once the scores are in
    (mapping,) = page.context["mappings"]["project"]
    assert (mapping["human"], mapping["n_annotators"], mapping["origin"]) == (0.8, 2, "stored report")
    assert page.context["rows"][0]["human"] == 0.8
    assert 'id="pending-reports"' not in page.content.decode() and queued_messages() == 0


def test_a_report_page_without_a_report_queues_one_and_a_worker_fills_it_in(start_worker, dave):
    """The report page, like the results pages, never computes: answers with no report get a queued one."""
    task = build_task("classification", "emotion", [{"text": f"t{i}", "label": "a"} for i in range(5)],
                      labels=["a", "b"])
    import_answers(task, answers_from_columns({"ann1": ["a", "a", "a", "a", "b"], "ann2": ["a", "a", "a", "b", "b"]}))
    client = Client()
    client.force_login(dave)

    first, second = client.get(f"/reports/task/{task.pk}/"), client.get(f"/reports/task/{task.pk}/")

    report = Report.objects.get(task=task)
    assert (report.status, report.result, report.computations) == ("queued", None, 0)
    assert queued_messages() == 1  # two page views, one job
    html = second.content.decode()
    assert "Queued: the report will be computed by a worker shortly." in html
    assert f'hx-get="/reports/task/{task.pk}/status/' in html and first.status_code == 200

    start_worker()
    report = wait_for_report(task)
    page = client.get(f"/reports/task/{task.pk}/")
    assert (report.status, report.computations) == ("done", 1)
    assert page.context["doc"]["human"]["scores"]["accuracy"] == 0.8


def test_a_report_page_of_a_task_without_answers_queues_nothing(dave):
    task = build_task("classification", "quiet", [{"text": "t", "label": "a"}], labels=["a", "b"])
    client = Client()
    client.force_login(dave)
    assert "No report has been computed for this task yet." in client.get(f"/reports/task/{task.pk}/").content.decode()
    assert not Report.objects.filter(task=task).exists() and queued_messages() == 0
