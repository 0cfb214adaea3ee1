"""Finding jobs whose worker died and sending them again: the one beat entry and the one worker-start hook.

A worker killed outright (SIGKILL, power loss, the OOM killer) requeues nothing, and its Celery message comes
back only after the broker's hour-long visibility timeout. Its job's lease lapses within
settings.JOB_LEASE_SECONDS instead; then `requeue_lapsed` (every DEAD_RUN_CHECK_SECONDS, from the beat
embedded in every worker) sends each such job a new message, and `resume` (once, when a worker starts) sends
every unfinished job one, timed for when its lease lapses. Both also send the messages the broker never accepted
(the outbox, `outbox.py`: jobs submitted while Redis was down), so such a job runs within one beat period of the
worker reaching Redis again. Copies are harmless: the claim decides who works.
"""
from __future__ import annotations

import logging
from datetime import timedelta

from django.db.models import Q, QuerySet
from django.utils import timezone

from hume import jobs
from hume.jobs import outbox
from hume.jobs.lease import lease_seconds
from hume.jobs.models import JobStatus
from hume.jobs.registry import TYPES, JobType, types

log = logging.getLogger(__name__)


def rows(job_type: JobType) -> QuerySet:
    return job_type.model_class()._default_manager.filter(**job_type.scope)


def send(job_type: JobType, key: object, *, countdown: float = 0) -> None:
    if job_type.requeue is not None and not countdown:
        job_type.requeue(key)
    else:
        jobs.enqueue(job_type.task, key, countdown=countdown)


def until_lapsed(job_rows: QuerySet) -> float | None:
    """Seconds until the running job of ``job_rows`` may be taken over (its lease's end, plus one); None when
    none of them is running."""
    expires = job_rows.filter(status=JobStatus.RUNNING).values_list("lease_expires_at", flat=True).first()
    if expires is None:
        return None
    return max(0.0, (expires - timezone.now()).total_seconds()) + 1


def look_again(type_name: str, key: object, *extra: object, after: float = 0) -> None:
    """The one way a job's own message comes back (no task re-schedules itself by hand): the type's task for
    ``key`` (and ``extra`` arguments), ``after`` seconds from now: at once when a time slice ended, or when a
    holder that may be dead loses its lease (`until_lapsed`), so the new message takes the job over."""
    jobs.enqueue(TYPES[type_name].task, key, *extra, countdown=after)


def send_unsent() -> dict[str, list[object]]:
    """Send the outbox's messages (jobs stored while the broker was down); {"unsent": [...]} when any went."""
    sent = outbox.send_unsent()
    if sent:
        log.warning("sent %d job message(s) the broker had refused: %s", len(sent), sent[:20])
    return {"unsent": list(sent)} if sent else {}


def requeue_lapsed() -> dict[str, list[object]]:
    """Send the outbox's messages, and a message for every running job whose lease lapsed; returns what was
    sent: the keys per job type (and "unsent": the outbox's messages)."""
    sent: dict[str, list[object]] = send_unsent()
    for job_type in types():
        keys = lapsed_keys(job_type)
        for key in keys:
            try:
                send(job_type, key)
            except Exception:  # one broker error must not keep the other types waiting
                log.exception("%s %s: could not be sent again", job_type.name, key)
        if keys:
            log.warning("%s: re-queued %s whose worker stopped renewing its lease", job_type.name, keys)
            sent[job_type.name] = keys
    return sent


def lapsed_keys(job_type: JobType) -> list[object]:
    """The one recovery finder: the keys of the type's jobs a dead worker left (running, the lease lapsed; and
    the type's stranded ones, e.g. a split ranking whose chunks are all done and whose merge was never written)."""
    keys = set(job_type.stranded_keys())
    keys |= set(rows(job_type).filter(status=JobStatus.RUNNING, lease_expires_at__lt=timezone.now())
                .values_list(job_type.key, flat=True))
    return sorted(keys)


def waiting(job_type: JobType) -> list[tuple[object, float]]:
    """(key, seconds until it may be claimed) of every job of the type a starting worker should look at:
    running ones once their lease lapses (a live holder keeps renewing it, and the look finds nothing to
    do), and ones queued for longer than a lease (a broker restarted without its data lost their message;
    one sent just now is left to do its work)."""
    now = timezone.now()
    waited = now - timedelta(seconds=lease_seconds())
    look = Q(status=JobStatus.RUNNING)
    if job_type.resume_queued:
        since = job_type.queued_since
        look |= Q(status=JobStatus.QUEUED) & (Q(**{f"{since}__isnull": True}) | Q(**{f"{since}__lt": waited}))
    found = rows(job_type).filter(look).values_list(job_type.key, "status", "lease_expires_at")
    soonest: dict[object, float] = {}
    for key, status, expires in found:
        held = status == JobStatus.RUNNING and expires is not None
        wait = max(0.0, (expires - now).total_seconds()) if held else 0.0
        soonest[key] = min(wait, soonest.get(key, wait))
    return sorted(soonest.items(), key=lambda pair: (pair[1], str(pair[0])))


def resume() -> dict[str, list[object]]:
    """Send the outbox's messages, and give every unfinished job of every type a message, timed for when its
    lease lapses."""
    sent: dict[str, list[object]] = send_unsent()
    for job_type in types():
        found = waiting(job_type)
        for key, wait in found:
            jobs.enqueue(job_type.task, key, countdown=wait + 1 if wait else 0)
        if found:
            sent[job_type.name] = [key for key, _ in found]
    return sent
