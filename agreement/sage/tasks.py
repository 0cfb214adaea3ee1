"""The Celery task of the SAGE page: takes a run id, claims it atomically (jobs.execute)."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="sage.run_study", acks_late=True)
def run_sage_study(run_id: int) -> str:
    from agreement.sage.jobs import execute

    return execute(run_id)
