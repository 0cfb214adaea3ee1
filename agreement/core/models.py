"""Stored agreement reports: one row per task, holding the latest report and the state of its computation.

The row is also the job's lock. A worker runs a report only after it wins a conditional
``UPDATE ... WHERE status = 'queued'`` (see ``agreement/core/reports.py``), and it stores its result only while
its ``claim_token`` is still the row's, so duplicated or redelivered Celery messages are harmless. The
previous result stays readable while a new one is computed, and the digests of the answers and gold it was
computed from tell whether it is still fresh.
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q

from hume.jobs.models import Job
from tasks_app.models import Task


class Report(Job):
    """The agreement report of one task (with its per-batch and per-language parts) and its job state
    (status, claim, lease, attempts, error: hume/jobs/models.py)."""

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="agreement_report")
    stage = models.CharField(max_length=100, blank=True, help_text="What the running job is doing now.")
    progress = models.PositiveSmallIntegerField(default=0, help_text="Percent, for the progress bar.")

    requested_at = models.DateTimeField(null=True, blank=True,
                                        help_text="Last time answers changed or a run was asked for.")
    computations = models.PositiveIntegerField(default=0, help_text="Times the metrics were actually computed.")
    aggregation = models.CharField(max_length=40, default="majority",
                                   help_text="The job's parameter: how the report combines the humans "
                                             "(measures/annotator_models.py). Kept on the row, so a run sent again "
                                             "(a lapsed lease, a re-run after new answers) computes the same thing.")

    answers_digest = models.CharField(max_length=64, blank=True, help_text="sha256 of the sorted answer rows read.")
    inputs_digest = models.CharField(max_length=64, blank=True, help_text="sha256 of answers, gold and task settings.")
    result = models.JSONField(null=True, blank=True, help_text="The report document (docs/reports.md).")
    computed_at = models.DateTimeField(null=True, blank=True)
    computed_in = models.CharField(max_length=255, blank=True, help_text="'worker <hostname>' or 'cli'.")

    class Meta:
        ordering = ["task__name"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="report_progress_percent"),
        ]

    def __str__(self) -> str:
        return f"report of {self.task_id} ({self.status})"
