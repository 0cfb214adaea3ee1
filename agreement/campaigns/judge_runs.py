"""The judge's run a campaign starts when its judge has not labelled every item of the task: the LLM annotator's
own run machinery (annotation/llm/run_control.py, a job of the job layer), over the task's pool. The campaign waits
(`waiting for the judge`) and plans its first batch when the run finishes (reviewing.py `after_the_judge`); a judge
that cannot be run is refused at start with the reason (docs/campaigns.md, "A judge that has not labelled").
"""
from __future__ import annotations

from typing import Any

from annotation.llm.models import LLMAnnotatorConfig, LLMRun
from annotation.llm.run_control import create_run, enqueue_run
from annotation.models import Annotator
from tasks_app.models import Task


def why_not_runnable(judge: Annotator) -> str:
    """'' when the judge can be run over a task; else why not, in words."""
    config = LLMAnnotatorConfig.objects.filter(annotator=judge).first()
    if config is None:
        return (f"{judge.name!r} has no endpoint configured (imported answers only): configure it as an LLM "
                "annotator (docs/llm.md) or import its answers on every item")
    if config.max_requests is not None and config.requests_sent >= config.max_requests:
        return (f"{judge.name!r} has spent its cap of {config.max_requests} requests (docs/llm.md, \"Spend caps\"): "
                "raise the cap or set its requests sent back to 0")
    return ""


def start_judge_run(judge: Annotator, task: Task, created_by: Any = None) -> LLMRun:
    """The judge's run over the task's pool: one already queued or running is joined; else a new run, asking again
    for items that failed before, sent to a worker after the commit."""
    active = (LLMRun.objects.filter(annotator=judge, task=task, batch=None, status__in=LLMRun.ACTIVE)
              .order_by("-created_at").first())
    if active is not None:
        return active
    run = create_run(judge, task=task, created_by=created_by, retry_failed=True)
    enqueue_run(run)
    return run


def judge_run_data(run: LLMRun | None) -> dict[str, Any] | None:
    """The run in the campaign's JSON: id, state (queued, running, paused, done, failed, cancelled), items, error."""
    if run is None:
        return None
    return {"id": run.pk, "state": run.state, "total_items": run.total_items, "error": run.error}
