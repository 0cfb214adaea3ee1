"""Queueing and running a PPI estimate as a worker job (the report page's button): the same
`ppi_document` the `ppi` command prints, stored on the task's PPIEstimate row for that judge.

Queueing checks the judge at once (a person or an unknown name is refused before any row changes), then marks
the row queued and sends `agreement.compute_ppi` after commit through the job layer's outbox: a broker that is
down leaves the row queued, its message kept for the layer's beat to send when the broker is back, and raises
`hume.jobs.BrokerDown` so the page says so at once (never computed inline instead; issue 35, item 5).

Running claims the row through the job layer (hume/jobs/lease.py), so a second copy of the message does
nothing, and renews its lease while it computes, so a worker killed meanwhile leaves an estimate the layer sends
to another worker; refused input (a judge that missed items, …) fails the row with the reason.
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
from hume.jobs import control
from hume.jobs.lease import claim
from tasks_app.models import Task

log = logging.getLogger(__name__)
Status = PPIEstimate.Status


def request_ppi(task: Task, judge_name: str, *, alpha: float = 0.05,
                target_half_width: float | None = None) -> PPIEstimate:
    """Mark the (task, judge) estimate queued with these settings and send the job after commit.
    Raises PPIInputError for a judge that is a person or unknown (nothing written), BrokerDown when the
    broker is down (the row stays queued and its message is sent when the broker is back)."""
    find_judge(task, judge_name)
    with transaction.atomic():
        asked = {"alpha": alpha, "target_half_width": target_half_width, "requested_at": timezone.now()}
        row, _ = PPIEstimate.objects.get_or_create(task=task, judge=judge_name, defaults=asked)
        control.submit(PPIEstimate.objects.filter(pk=row.pk), superseding=True, **asked)
        jobs.enqueue_on_commit("agreement.compute_ppi", row.pk)
    row.refresh_from_db()
    return row


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
