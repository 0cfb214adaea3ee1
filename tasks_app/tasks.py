"""Celery tasks of tasks_app: big dataset imports (tasks_app/import_jobs.py)."""
from __future__ import annotations

from celery import shared_task

from .import_jobs import run_import_job


@shared_task(name="tasks_app.import_dataset", bind=True, acks_late=True, reject_on_worker_lost=True)
def import_dataset(self, job_id: int) -> str:
    """Import a stored upload; a redelivered message (its worker process died) takes its own claim over."""
    return run_import_job(job_id, claimed_by=self.request.id or "")
