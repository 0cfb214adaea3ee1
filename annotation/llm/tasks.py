"""The Celery task of LLM annotator runs. It takes an id and is safe to deliver twice: the run's claim decides who
executes it (annotation/llm/run_executor.py). Runs are sent by task name (`run_control.enqueue_run`); a run whose
worker died is sent again by the job layer (its type is registered in annotation/apps.py).

A judge panel's refresh computes agreement, so its task is in the agreement app (agreement/core/judge_panels.py)."""
from __future__ import annotations

from celery import Task, shared_task

from annotation.core.signals import llm_run_finished
from annotation.llm.run_executor import execute_run
from hume.jobs import recovery
from hume.jobs.lease import renew_seconds


@shared_task(name="annotation.llm_run", bind=True, acks_late=True, reject_on_worker_lost=True)
def run_llm(self: Task, run_id: int) -> str:
    """Execute a slice of a run, then hand the rest back to the queue: at once when the slice ended, a little
    later when another run of the same annotator is executing ("wait")."""
    verdict = execute_run(run_id, claimed_by=self.request.id or "")
    if verdict in ("done", "gone"):  # gone: finished meanwhile, or out of attempts (failed by the claim)
        llm_run_finished.send(sender=run_llm, run_id=run_id)
    elif verdict == "continue":
        recovery.look_again("LLM run", run_id)
    elif verdict == "wait":
        recovery.look_again("LLM run", run_id, after=renew_seconds())
    return verdict
