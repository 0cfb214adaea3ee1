"""Recompute a task's report after its answers change: debounced, after commit.

Registered by the agreement app (agreement may import annotation, never the reverse). Every saved or
deleted Annotation schedules, once its transaction commits, a report run a few seconds later; a Redis key
set with NX makes the first change in a window send the one message, so a thousand submits enqueue one
job. An annotator's submit never fails because of this: if Redis is down the error is logged and stored
on the report, which the report page shows.

Answers on a task with a collecting campaign also ask the campaign's debounced review
(agreement/campaigns/review_queue.py), and a finished LLM run the review of a campaign waiting for it. It also
enqueues a judge panel's refresh (agreement/core/judge_panels.py) when annotation asks for one.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any

import redis
from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete, post_save

from agreement.campaigns.review_queue import judge_run_finished, request_reviews
from agreement.campaigns.reviewing import link_ran_dry
from agreement.core.reports import ReportQueueError, request_report
from annotation.models import Annotation
from hume import jobs
from hume.jobs import outbox
from tasks_app.models import Item, Task

log = logging.getLogger(__name__)
_client: redis.Redis | None = None


def debounce_seconds() -> float:
    """Seconds between an answer and the report run it triggers (HUME_REPORT_DEBOUNCE_SECONDS, default 10)."""
    default = os.environ.get("HUME_REPORT_DEBOUNCE_SECONDS", "10")
    return float(getattr(settings, "REPORT_DEBOUNCE_SECONDS", default))


def crowd_debounce_seconds(task_id: int, seconds: float) -> float:
    """The window for a task an open crowd study answers (CROWD_REPORT_DEBOUNCE_SECONDS, default 60, when longer
    than `seconds`): hundreds of participants keep answering, and a report run every 10 s cost the worker more
    CPU per answer than the web spent serving it (docs/crowd.md, "Where a participant's request goes"). Asked
    once per window and process, never per answer."""
    crowd = float(getattr(settings, "CROWD_REPORT_DEBOUNCE_SECONDS", 60))
    if crowd <= seconds:
        return seconds
    from annotation.crowd.models import StudyLink

    open_study = StudyLink.objects.filter(batch__task_id=task_id, is_open=True, batch__is_open=True).exists()
    return crowd if open_study else seconds


def redis_client() -> redis.Redis:
    global _client
    if _client is None:
        _client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=2, socket_timeout=2)
    return _client


def debounce_key(task_id: int) -> str:
    return f"hume:report-debounce:{task_id}"


# task id → time.monotonic() until which this process knows the task's debounce key is set in Redis
_window_until: dict[int, float] = {}


def first_in_window(task_id: int, seconds: float) -> bool:
    """True for the first change of a debounce window.

    The key lives a little less than the countdown, so a change that finds it set committed before the
    pending run starts reading: no change is left out of every run. One round trip sets the key (if absent)
    and reads its remaining life; until then this process knows the answer without asking Redis again
    (a submit is a few milliseconds; the round trip was a tenth of a millisecond of them, for nothing).
    """
    now = time.monotonic()
    if _window_until.get(task_id, 0.0) > now:
        return False
    ttl_ms = max(1, int(seconds * 1000) - 500)
    with redis_client().pipeline(transaction=False) as pipe:
        created, remaining_ms = pipe.set(debounce_key(task_id), "1", nx=True, px=ttl_ms).pttl(
            debounce_key(task_id)).execute()
    if remaining_ms > 0:  # measured after `now`: the local window never outlives the key
        _window_until[task_id] = now + remaining_ms / 1000
    return bool(created)


def forget_windows() -> None:
    """Forget what this process knows of debounce keys (tests delete the keys under it)."""
    _window_until.clear()


def schedule_report(task_id: int, *, after_delete: bool = False) -> None:
    """Queue a debounced report run; failures are logged and recorded on the report, never raised."""
    seconds = debounce_seconds()
    if after_delete and not Task.objects.filter(pk=task_id).exists():
        return  # the task itself was deleted (its annotations cascade): nothing to report
    if _window_until.get(task_id, 0.0) > time.monotonic():
        return  # this process knows a run is pending (first_in_window)
    try:
        seconds = crowd_debounce_seconds(task_id, seconds)
        if first_in_window(task_id, seconds):
            request_report(task_id, countdown=seconds)
    except ReportQueueError:
        pass  # the report is queued, its message kept in the job layer's outbox for when the broker is back
    except redis.RedisError as exc:
        # Redis is the broker too: queue the report with its message in the outbox, one per task (issue 35, item 5)
        log.warning("report of task %s: Redis is unreachable (%s); queued for when it is back", task_id, exc)
        if not outbox.unsent("agreement.compute_report", task_id):
            try:
                request_report(task_id, countdown=seconds)
            except ReportQueueError:
                pass


def task_id_of(annotation: Annotation) -> int | None:
    """The annotation's task without a query when its item is already loaded."""
    if Annotation.item.is_cached(annotation):
        return annotation.item.task_id
    return Item.objects.filter(pk=annotation.item_id).values_list("task_id", flat=True).first()


def annotation_saved(sender: type[Annotation], instance: Annotation, **kwargs: Any) -> None:
    task_id = task_id_of(instance)
    if task_id is not None:
        transaction.on_commit(lambda: schedule_report(task_id))
        transaction.on_commit(lambda: request_reviews(task_id))


def annotation_deleted(sender: type[Annotation], instance: Annotation, **kwargs: Any) -> None:
    task_id = task_id_of(instance)
    if task_id is not None:
        transaction.on_commit(lambda: schedule_report(task_id, after_delete=True))


def annotations_imported(sender: type[Annotation], task_id: int, **kwargs: Any) -> None:
    transaction.on_commit(lambda: schedule_report(task_id))
    transaction.on_commit(lambda: request_reviews(task_id))


def judge_panel_refresh_requested(sender: type, panel_id: int, **kwargs: Any) -> None:
    """Enqueue the panel refresh after commit, by task name (this module need not import agreement/tasks.py); a
    broker error is raised to the admin, not swallowed."""
    jobs.enqueue_on_commit("agreement.refresh_judge_panel", panel_id)


def connect() -> None:
    from annotation.core.signals import annotations_imported as imported
    from annotation.core.signals import judge_panel_refresh_requested as panel_refresh
    from annotation.core.signals import llm_run_finished, study_link_ran_dry

    imported.connect(annotations_imported, dispatch_uid="agreement.annotations_imported")
    panel_refresh.connect(judge_panel_refresh_requested, dispatch_uid="agreement.judge_panel_refresh_requested")
    llm_run_finished.connect(judge_run_finished, dispatch_uid="agreement.judge_run_finished")
    study_link_ran_dry.connect(link_ran_dry, dispatch_uid="agreement.study_link_ran_dry")
    post_save.connect(annotation_saved, sender=Annotation, dispatch_uid="agreement.annotation_saved")
    post_delete.connect(annotation_deleted, sender=Annotation, dispatch_uid="agreement.annotation_deleted")
