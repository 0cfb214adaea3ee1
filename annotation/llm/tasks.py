"""Celery tasks of LLM annotator runs. They take ids, and are safe to deliver twice (see runs.py). A starting
worker gives every active run a message through the job layer's one `worker_ready` hook (the type is
registered in annotation/apps.py; `runs.resumable_runs`).

A judge panel's refresh computes agreement, so its task is in the agreement app (agreement/judge_panels.py)."""
from __future__ import annotations

import logging

from celery import shared_task

from annotation.llm.models import LLMRun
from annotation.llm.run_executor import execute_run, heartbeat_seconds

log = logging.getLogger(__name__)
BUSY_ROUNDS = 6  # × heartbeat: longer than the 3 intervals after which a silent executor counts as dead


@shared_task(name="annotation.llm_run")
def run_llm(run_id: int, busy_rounds: int = 0) -> str:
    """Execute a slice of a run, then hand the rest back to the queue.

    "busy-run" means another executor heart-beat recently: it may be alive (this message is a duplicate)
    or have just died (a worker restart); looking again a few times tells the two apart."""
    verdict = execute_run(run_id)
    if verdict == "continue":
        run_llm.apply_async((run_id,))
    elif verdict == "wait":
        run_llm.apply_async((run_id,), countdown=2 * heartbeat_seconds())
    elif verdict == "busy-run" and busy_rounds < BUSY_ROUNDS:
        run_llm.apply_async((run_id, busy_rounds + 1), countdown=heartbeat_seconds())
    return verdict


def enqueue_run(run: LLMRun) -> None:
    """Enqueue after the transaction that created or resumed the run commits; a broker error is loud."""
    run_llm.delay_on_commit(run.pk)
