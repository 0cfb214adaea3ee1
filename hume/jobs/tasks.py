"""The layer's two Celery tasks and its one `worker_ready` hook (settings.CELERY_BEAT_SCHEDULE names
`jobs.requeue_lapsed`; hume/tasks.py imports this module so workers register them)."""
from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import worker_ready

log = logging.getLogger(__name__)


@shared_task(name="jobs.requeue_lapsed")
def requeue_lapsed() -> dict[str, list[Any]]:
    """Periodic (beat embedded in every worker): re-send every job whose lease lapsed."""
    from hume.jobs import recovery

    return recovery.requeue_lapsed()


@shared_task(name="jobs.resume")
def resume() -> dict[str, list[Any]]:
    """Once per worker start: a message for every unfinished job, timed for when its lease lapses."""
    from hume.jobs import recovery

    return recovery.resume()


@worker_ready.connect
def resume_jobs_when_a_worker_starts(sender: Any = None, **kwargs: Any) -> None:
    try:
        resume.delay()
    except Exception:  # a broker hiccup must not stop the worker from starting
        log.exception("could not enqueue the resumption of jobs")
