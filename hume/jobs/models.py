"""The abstract job row every background job of HUME shares (docs/architecture.md, "The job layer").

A job is a row a worker claims before it works on it. The fields that say who holds it and until when are
declared here once, and only here (`tests/test_jobs_layer.py` checks that no concrete model declares them
again): the status in one vocabulary, the claim token that fences every write of the holder, the holder,
the lease deadline the holder keeps pushing forward while it works, the attempts, the error and the times.
A concrete job adds what its work needs (inputs, results, progress) and registers its type
(`hume/jobs/registry.py`) so lapsed ones are found and re-queued.
"""
from __future__ import annotations

from django.db import models

# The fields a job's lease and claim live in: declared by `Job` alone.
LEASE_FIELDS = ("status", "claim_token", "claimed_by", "holder", "lease_expires_at", "attempts", "error",
                "started_at", "finished_at")


class JobStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


ACTIVE = (JobStatus.QUEUED, JobStatus.RUNNING)
FINISHED = (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


class Job(models.Model):
    """A unit of background work: queued → running (claimed, leased) → done, failed or cancelled."""

    Status = JobStatus

    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    claim_token = models.UUIDField(null=True, blank=True, help_text="Fences writes to the run that holds the claim.")
    claimed_by = models.CharField(max_length=255, blank=True,
                                  help_text="What holds the claim: a Celery message id, or 'cli'.")
    holder = models.CharField(max_length=255, blank=True, help_text="The worker process holding it: host:pid.")
    lease_expires_at = models.DateTimeField(null=True, blank=True,
                                            help_text="A running claim not renewed by then is abandoned.")
    attempts = models.PositiveIntegerField(default=0, help_text="Claims won, including take-overs after a crash.")
    error = models.TextField(blank=True, help_text="Why the last run failed or could not be queued.")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        abstract = True

    @property
    def in_progress(self) -> bool:
        return self.status in ACTIVE


class UnsentMessage(models.Model):
    """A job's Celery message that the broker has not accepted yet: the outbox (hume/jobs/outbox.py).

    Written in the same transaction as the job it sends, deleted once the broker took the message. A row still
    here after that (the broker was down, or the sending process died after the commit) is sent again by the
    layer's beat entry, so a job stored while Redis was away runs once Redis is back, without a worker restart.
    """

    task = models.CharField(max_length=200, help_text="The Celery task name the message is for.")
    args = models.JSONField(default=list, help_text="The task's arguments (ids).")
    options = models.JSONField(default=dict, help_text="apply_async's options (countdown, retry policy).")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    sends_failed = models.PositiveIntegerField(default=0, help_text="Sends the broker refused so far.")
    error = models.TextField(blank=True, help_text="Why the last send failed.")

    class Meta:
        app_label = "hume"
        ordering = ("pk",)

    def __str__(self) -> str:
        return f"{self.task}{tuple(self.args)}"
