"""The Celery task of the SAGE page: takes a run id, claims it through the job layer (jobs.execute)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="sage.run_study", bind=True, acks_late=True, reject_on_worker_lost=True)
def run_sage_study(self, run_id: int) -> str:  # type: ignore[no-untyped-def]
    from agreement.sage.study_jobs import execute

    return execute(run_id, claimed_by=self.request.id or "")
