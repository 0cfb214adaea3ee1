"""Queueing and running a PPI estimate as a worker job (the report page's button): the same
`ppi_document` the `ppi` command prints, stored on the task's PPIEstimate row for that judge.

Queueing checks the judge at once (a person or an unknown name is refused before any row changes), then marks
the row queued and sends `agreement.compute_ppi` after commit; a broker that is down marks the row failed with
the reason and raises (never computed inline instead). Running claims the row through the job layer
(hume/jobs/lease.py), so a second copy of the message does nothing, and renews its lease while it computes, so
a worker killed meanwhile leaves an estimate the layer sends to another worker; refused input (a judge that
missed items, …) fails the row with the reason.
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agreement.ppi.document import ppi_document
from agreement.ppi.models import PPIEstimate
from agreement.ppi.ppi_loading import PPIInputError, find_judge
from hume import jobs
from hume.jobs.lease import claim
from tasks_app.models import Task

log = logging.getLogger(__name__)
Status = PPIEstimate.Status


class PPIQueueError(RuntimeError):
    """The job could not be queued (the broker is unreachable); the row says so too."""


def request_ppi(task: Task, judge_name: str, *, alpha: float = 0.05,
                target_half_width: float | None = None) -> PPIEstimate:
    """Mark the (task, judge) estimate queued with these settings and send the job after commit.
    Raises PPIInputError for a judge that is a person or unknown (nothing written), PPIQueueError when the
    broker is down."""
    find_judge(task, judge_name)
    with transaction.atomic():
        row, _ = PPIEstimate.objects.update_or_create(
            task=task, judge=judge_name,
            defaults={"alpha": alpha, "target_half_width": target_half_width, "status": Status.QUEUED, "error": "",
                      "requested_at": timezone.now(), "attempts": 0, "claim_token": None, "lease_expires_at": None})
        transaction.on_commit(lambda: enqueue(row.pk))
    row.refresh_from_db()
    return row


def enqueue(estimate_id: int) -> None:
    try:
        jobs.enqueue("agreement.compute_ppi", estimate_id, retry=True,
                     retry_policy={"max_retries": 2, "interval_start": 0, "interval_step": 0.2})
    except Exception as exc:  # kombu and redis-py raise their own errors: all mean "not queued"
        message = f"The estimate could not be queued: the task queue is unreachable ({type(exc).__name__}: {exc})."
        log.error("PPI estimate %s: %s", estimate_id, message)
        PPIEstimate.objects.filter(pk=estimate_id, status=Status.QUEUED).update(
            status=Status.FAILED, error=message, finished_at=timezone.now())
        raise PPIQueueError(message) from exc


def run_ppi(estimate_id: int, computed_in: str = "worker", claimed_by: str = "") -> str:
    """Compute and store the estimate if this call wins the claim; returns what happened."""
    lease = claim(PPIEstimate.objects.filter(pk=estimate_id), claimed_by=claimed_by,
                  max_attempts=settings.JOB_MAX_ATTEMPTS)
    if lease is None:
        return "not claimed: not queued"
    row = PPIEstimate.objects.select_related("task").get(pk=estimate_id)
    try:
        with lease.kept():
            doc = ppi_document(row.task, row.judge, alpha=row.alpha, target_half_width=row.target_half_width,
                               computed_in=computed_in)
    except PPIInputError as problem:
        lease.fail(str(problem))
        return f"failed: {problem}"
    except Exception as exc:
        lease.fail(f"{type(exc).__name__}: {exc}")
        raise
    return "done" if lease.finish(document=doc) else "not stored: another worker holds it now"
