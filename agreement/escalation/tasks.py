"""The Celery task of the escalation page: takes a plan id, claims it atomically (jobs.execute)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="escalation.compute_plan", acks_late=True)
def compute_escalation_plan(plan_id: int) -> str:
    from agreement.escalation.plan_jobs import execute

    return execute(plan_id)
