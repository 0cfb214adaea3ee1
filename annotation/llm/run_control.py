"""Creating and steering LLM runs: what pages, the API and commands call (the worker's side is run_executor.py).

A run is a job of the job layer (hume/jobs/): created queued, sent to a worker by task name after the
transaction commits (`enqueue_run`), paused by an admin's hold (`paused`, which no worker claims), resumed,
cancelled. Steering is one conditional UPDATE each, so it races safely with the worker holding the run: the
holder reads the run's status and hold at every turn of its loop and stops taking new items.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from annotation.core.annotators import create_annotator
from annotation.core.models import Annotator, Batch
from annotation.core.signals import llm_run_finished
from annotation.llm.models import LLMAnnotatorConfig, LLMRun
from annotation.llm.prompting import PROMPT_VERSIONS
from annotation.llm.run_progress import run_items
from hume import jobs
from hume.jobs import control
from tasks_app.models import Task

TASK = "annotation.llm_run"  # annotation/llm/tasks.py; sent by name, so this module need not import it
Status = LLMRun.Status


def create_llm_annotator(name: str, *, created_by: User | None = None, **config: Any) -> LLMAnnotatorConfig:
    """An Annotator whose agent is llm (its user cannot log in) with its endpoint configuration, validated."""
    with transaction.atomic():
        annotator = create_annotator(name, agent=Annotator.Agent.LLM)  # no password: it cannot log in
        llm = LLMAnnotatorConfig(annotator=annotator, created_by=created_by, **config)
        llm.full_clean()
        llm.save()
    return llm


def create_run(annotator: Annotator, *, batch: Batch | None = None, task: Task | None = None,
               created_by: User | None = None, retry_failed: bool = False) -> LLMRun:
    """A queued run of `annotator` over a batch, or over a task's pool when no batch is given."""
    config = LLMAnnotatorConfig.objects.filter(annotator=annotator).first()
    if annotator.agent != Annotator.Agent.LLM or config is None:
        raise ValueError(f"{annotator.name} is not an LLM annotator with an endpoint configuration")
    if batch is not None:
        if task is not None and task.pk != batch.task_id:
            raise ValueError(f"batch {batch.name} belongs to another task")
        task = batch.task
    if task is None:
        raise ValueError("a run needs a batch or a task")
    return LLMRun.objects.create(
        annotator=annotator, task=task, batch=batch, model=config.model, prompt_version=PROMPT_VERSIONS[task.kind],
        retry_failed=retry_failed, total_items=run_items(task, batch).count(), created_by=created_by,
    )


def enqueue_run(run: LLMRun) -> None:
    """Send the run to a worker after the transaction that created or resumed it commits; a broker error is loud."""
    jobs.enqueue_on_commit(TASK, run.pk)


def pause_run(run: LLMRun) -> bool:
    """Hold the run: no new item is asked; requests in flight finish and are stored, then its worker lets go."""
    return bool(LLMRun.objects.filter(pk=run.pk, status__in=LLMRun.ACTIVE, paused=False).update(paused=True))


def resume_run(run: LLMRun) -> bool:
    """Release a paused run, queue a failed one again (with its attempts counted afresh), or accept a stalled one
    (its worker died and no worker took it over yet); the caller enqueues it. Finished items are never asked
    again."""
    if LLMRun.objects.filter(pk=run.pk, status__in=LLMRun.ACTIVE, paused=True).update(paused=False):
        return True
    if control.submit(LLMRun.objects.filter(pk=run.pk, status=Status.FAILED), paused=False, finished_at=None):
        return True
    return stalled_runs().filter(pk=run.pk).exists()


def cancel_run(run: LLMRun) -> bool:
    """Stop for good. A worker holding the run stores what is in flight, then lets go (it keeps its claim until
    then, so those answers are not lost)."""
    cancelled = bool(control.cancel(LLMRun.objects.filter(pk=run.pk), paused=False))
    if cancelled:
        llm_run_finished.send(sender=cancel_run, run_id=run.pk)
    return cancelled


def is_stalled(run: LLMRun) -> bool:
    """Running, but its lease lapsed: the worker died (the job layer sends it again; resume does so at once)."""
    return run.status == Status.RUNNING and (run.lease_expires_at is None or run.lease_expires_at < timezone.now())


def stalled_runs() -> QuerySet[LLMRun]:
    """Runs that should be executing but have no live holder (their worker died, the message was lost, or a
    queued run simply waits for a free worker: a second message for it is harmless)."""
    return LLMRun.objects.filter(status__in=LLMRun.ACTIVE, paused=False).exclude(
        Q(status=Status.RUNNING) & Q(lease_expires_at__gte=timezone.now()))
