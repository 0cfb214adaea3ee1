"""A SAGE study run asked for from the page: what to score, and the stored Table 1 once a worker made it."""
from __future__ import annotations

from django.conf import settings
from django.db import models

from hume.jobs.models import Job, JobStatus


class SageRun(Job):
    """A SAGE study run: its job state (status, claim, lease, attempts, error) is the job layer's
    (hume/jobs/models.py), so a worker killed mid-run leaves a lease that lapses and another worker finishes."""

    study = models.CharField(max_length=200, help_text="The study folder's name under SAGE_STUDIES_DIR.")
    folder = models.CharField(max_length=1000, help_text="The folder resolved when the run was asked for.")
    metrics = models.JSONField(default=list)
    model_names = models.JSONField(default=list)
    seed = models.IntegerField(default=0)
    table = models.JSONField(null=True, blank=True, help_text="run_study's output: Table 1 and the subtables.")
    device = models.CharField(max_length=100, blank=True,
                              help_text="Where its models ran: cpu, cuda:0, mps (cpu for classical metrics alone).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [models.CheckConstraint(condition=models.Q(status__in=JobStatus.values),
                                              name="sage_run_status_known")]

    def __str__(self) -> str:
        return f"SAGE {self.study} #{self.pk} ({self.status})"

    @property
    def pending(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)
