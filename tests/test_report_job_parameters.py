"""A report's job parameters live on its row (issue 21, item 4): the aggregation a researcher asked for is what
every later run of the same report computes with, also one the job layer sends again after its worker died.

Before, the aggregation travelled only in the Celery message, so a report re-queued by the beat (a lapsed
lease) or by new answers was computed by majority vote, not by what was asked."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from agreement.core.reports import claim, request_report, requeue_if_dead
from agreement.models import Report
from tests.report_builders import cli_report, wait_for_report
from tests.test_report_aggregation import spam_crowd


def lapse(task_id: int) -> None:
    """As if the worker holding the report had died: its lease ran out without renewal."""
    Report.objects.filter(task_id=task_id).update(lease_expires_at=timezone.now() - timedelta(seconds=1))


@pytest.mark.django_db
def test_the_asked_aggregation_is_stored_on_the_row_and_kept_by_a_request_that_names_none(
        django_capture_on_commit_callbacks) -> None:
    task = spam_crowd("params-row")
    with django_capture_on_commit_callbacks(execute=False):
        request_report(task.pk, aggregation="dawid-skene")
        assert Report.objects.get(task=task).aggregation == "dawid-skene"
        request_report(task.pk)  # new answers, a Recompute: the same report again
        assert Report.objects.get(task=task).aggregation == "dawid-skene"
        assert claim(task.pk, "dead-worker-message") is not None
        lapse(task.pk)
        again = requeue_if_dead(Report.objects.get(task=task))
    assert (again.status, again.aggregation) == (Report.Status.QUEUED, "dawid-skene")


@pytest.mark.worker
def test_a_lapsed_dawid_skene_report_sent_again_by_the_beat_is_computed_with_dawid_skene(start_worker) -> None:
    task = spam_crowd("params-lapsed")
    # What request_report(task, aggregation="dawid-skene") stores; its message went to a worker that then died
    # holding the claim, so no message is left anywhere.
    Report.objects.create(task=task, aggregation="dawid-skene", requested_at=timezone.now())
    assert claim(task.pk, "dead-worker-message") is not None
    lapse(task.pk)

    start_worker()  # its start (jobs.resume) or its beat (jobs.requeue_lapsed) sends the report again
    report = wait_for_report(task, timeout=90)

    assert report.status == Report.Status.DONE, report.error
    assert (report.attempts, report.aggregation, report.result["aggregation"]) == (2, "dawid-skene", "dawid-skene")
    # Dawid-Skene sees through the three spammers always answering "a": the aggregated humans match gold
    # exactly (the same figure as tests/test_report_aggregation.py's worker test); majority vote would give
    # "a" on every item (three spammers out of five) and so score 0.5.
    assert report.result["human"]["main_score"] == pytest.approx(1.0)
    assert cli_report(task, "--aggregation", "majority")["human"]["main_score"] == pytest.approx(0.5)
