"""The Celery task of the escalation page: takes a plan id, claims it through the job layer (jobs.execute)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="escalation.compute_plan", bind=True, acks_late=True, reject_on_worker_lost=True)
def compute_escalation_plan(self, plan_id: int) -> str:  # type: ignore[no-untyped-def]
    from agreement.escalation.plan_jobs import execute

    return execute(plan_id, claimed_by=self.request.id or "")
