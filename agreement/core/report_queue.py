"""Asking for a task's report: mark its row queued and send the job by name after commit; re-queue one whose
worker died. The job's parameters (the aggregation) are stored on the row, so every message carries only the
task id and a report sent again computes what was asked.

Queueing never falls back to computing inline. The message goes through the job layer's outbox
(hume/jobs/outbox.py): when the broker is unreachable the report stays queued, its message is kept and sent by
the layer's beat when the broker is back, and ``ReportQueueError`` (the layer's ``BrokerDown``) says "queued, the
broker is down", so pages and the API can say so at once (issue 35, item 5).
"""
from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from agreement.core.models import Report
from hume import jobs
from hume.jobs import BrokerDown, control
from hume.jobs.lease import lapsed
from hume.jobs.registry import JobType

log = logging.getLogger(__name__)

Status = Report.Status


# The broker refused the report's message: the report is queued and its message kept in the job layer's outbox.
ReportQueueError = BrokerDown


def request_report(task_id: int, *, countdown: float = 0, aggregation: str | None = None) -> Report:
    """Mark the task's report queued (or due for a re-run if one is running) and send the job after commit.

    The job's parameters live on the row, not in the message: `aggregation` replaces the stored one, None
    keeps it, so a run sent again (a lapsed lease, new answers) computes what was asked. Raises
    ReportQueueError when the broker is down; inside an atomic block the message (and so the error) comes
    after the commit.
    """
    now = timezone.now()
    with transaction.atomic():
        report, _ = Report.objects.get_or_create(task_id=task_id, defaults={"requested_at": now})
        asked = {"requested_at": now} if aggregation is None else {"requested_at": now, "aggregation": aggregation}
        Report.objects.filter(pk=report.pk).update(**asked)
        control.submit(Report.objects.filter(pk=report.pk), stage="queued", progress=0)
        enqueue(task_id, countdown=countdown)
    report.refresh_from_db()
    return report


def requeue_if_dead(report: Report | None) -> Report | None:
    """Re-queue a report whose runner died (its lease lapsed); the status poll calls this on every look.

    Returns the report as it now stands. With the broker down it stays queued, its message in the outbox."""
    if report is None or not Report.objects.filter(lapsed(), pk=report.pk).exists():
        return report
    log.warning("report of task %s: its run stopped renewing its lease (worker gone); queued again", report.task_id)
    try:
        return request_report(report.task_id)
    except ReportQueueError:
        return Report.objects.get(pk=report.pk)


def requeue_dead(task_id: int) -> None:
    """The job layer's re-queue of a report whose lease lapsed (hume/jobs/recovery.py)."""
    requeue_if_dead(Report.objects.filter(task_id=task_id).first())


# The report job type (registered in agreement/apps.py): its task takes the task id.
JOB = JobType(name="report", model="agreement.Report", task="agreement.compute_report", key="task_id",
              queued_since="requested_at", requeue=requeue_dead)


def request_first_report(task_id: int) -> bool:
    """Queue the task's first report, unless one was ever asked for (a page found none stored); True if queued.

    The Report row created here is the lock: of pages opened at once, one creates it and sends one job
    (after commit); the others find it and only show its state.
    """
    _, created = Report.objects.get_or_create(
        task_id=task_id, defaults={"requested_at": timezone.now(), "status": Status.QUEUED, "stage": "queued"})
    if created:
        enqueue(task_id)
    return created


def enqueue(task_id: int, *, countdown: float = 0) -> None:
    """Send the Celery message (the task id: the parameters are on the row) once the current transaction
    commits, through the outbox; when the broker refuses it the report stays queued and ReportQueueError is
    raised (from the commit, inside an atomic block)."""
    jobs.enqueue_on_commit("agreement.compute_report", task_id, countdown=countdown)
