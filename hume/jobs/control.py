"""Writing a job's status without holding its lease: asking for it again, starting and finishing a parent whose
chunks hold the leases, failing, cancelling, saying why a queued job waits.

With `lease.py` (the holder's writes: `Lease.finish`, `fail`, `release`, renewal) these are the only writes of
a job's status and lease columns (`tests/test_one_way_to_run_a_job.py` counts the writes outside `hume/jobs/`: none).
Each takes the rows to write (a queryset of one job model) and returns how many it changed; each leaves a job a
live worker holds alone where the meaning requires it (a new request does not take a job from its holder).

A parent with chunks (a model run and its `RunChunk`s, a split ranking and its `RankingChunk`s) holds no lease
while its chunks embed: each chunk is a job of its own (`lease.claim_next`, capped like every claim), and the
barrier is `fail_parent_of_exhausted` (a chunk out of attempts fails its parent, named) and `finish` (the
worker that finds every chunk done writes the parent's result).
"""
from __future__ import annotations

from typing import Any

from django.db import models
from django.db.models import Q
from django.utils import timezone

from hume.jobs.lease import lapsed
from hume.jobs.models import ACTIVE, JobStatus

RELEASED = {"claim_token": None, "lease_expires_at": None}


def submit(rows: models.QuerySet, *, superseding: bool = False, **fields: Any) -> int:
    """Ask for the jobs (again): each not held by a live worker becomes queued. One idle (queued, done, failed,
    cancelled) starts afresh, its attempts at 0 and its error cleared; one whose holder died (running, its lease
    lapsed) keeps its attempts, so a job that kills its workers still meets its cap. ``superseding``: the request
    replaces a run in progress too (it read the old inputs): its holder loses the claim and stores nothing, and
    the job starts afresh. ``fields`` go with it (`finished_at` stays: the last result's time, until the next)."""
    now = timezone.now()
    queued = {"status": JobStatus.QUEUED, "error": "", **RELEASED, **fields}
    if superseding:
        return rows.update(**queued, attempts=0)
    fresh = rows.exclude(status=JobStatus.RUNNING).update(**queued, attempts=0)
    return fresh + rows.filter(lapsed(now)).update(**queued)


def start(rows: models.QuerySet, **fields: Any) -> int:
    """A queued parent is running (its first chunk was claimed; the chunks hold the leases)."""
    return rows.filter(status=JobStatus.QUEUED).update(status=JobStatus.RUNNING, **fields)


def finish(rows: models.QuerySet, **fields: Any) -> int:
    """A parent whose chunks are all done is done (written once, under the caller's lock on the parent)."""
    return rows.update(status=JobStatus.DONE, error="", finished_at=timezone.now(), **RELEASED, **fields)


def fail(rows: models.QuerySet, error: str, **fields: Any) -> int:
    """Fail the jobs not already done, with the reason (a holder of one loses its claim: it stores nothing)."""
    return rows.exclude(status=JobStatus.DONE).update(status=JobStatus.FAILED, error=error[:2000],
                                                      finished_at=timezone.now(), **RELEASED, **fields)


def cancel(rows: models.QuerySet, **fields: Any) -> int:
    """Stop the unfinished jobs for good. A holder keeps its claim until it lets go (what it has in flight is
    stored), so the claim columns stay."""
    return rows.filter(status__in=ACTIVE).update(status=JobStatus.CANCELLED, finished_at=timezone.now(), **fields)


def explain(rows: models.QuerySet, error: str) -> int:
    """Say on a queued job why it waits (its message is in the outbox: the broker is down)."""
    return rows.filter(status=JobStatus.QUEUED).update(error=error)


def exhausted_chunk(chunks: models.QuerySet) -> Any:
    """The first chunk of ``chunks`` that failed out of attempts (the claim fails such a chunk), or None."""
    return chunks.filter(status=JobStatus.FAILED).order_by("pk").first()


def fail_parent_of_exhausted(parent: models.QuerySet, chunks: models.QuerySet, describe: Any) -> bool:
    """The barrier's failure: when a chunk of ``chunks`` used up its attempts, fail ``parent`` (if still
    unfinished) with ``describe(chunk)``; True if it did."""
    chunk = exhausted_chunk(chunks)
    if chunk is None:
        return False
    return bool(fail(parent.filter(Q(status__in=ACTIVE)), describe(chunk)))
