"""An escalation plan asked for from the page: the judges and levels, and the result a worker stored.

A plan is a job of the job layer (hume/jobs/): its status, claim and lease are `Job`'s, so a worker killed while
computing it leaves a lease that lapses and the layer sends the plan to another worker."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from hume.jobs.models import ACTIVE, Job, JobStatus


class EscalationPlan(Job):
    task = models.ForeignKey("tasks_app.Task", on_delete=models.CASCADE, related_name="escalation_plans")
    judges = models.JSONField(default=list, help_text="LLM annotator names in cascade order.")
    alpha = models.FloatField()
    delta = models.FloatField()
    n_calibration = models.PositiveIntegerField(null=True, blank=True)
    tolerance = models.FloatField(null=True, blank=True)
    seed = models.IntegerField(default=0)
    alt_test_epsilon = models.FloatField(default=0.2, help_text="ε of the alternative-annotator test of each judge.")
    result = models.JSONField(null=True, blank=True, help_text="The `escalate` command's JSON, with the item ids.")
    alt_tests = models.JSONField(null=True, blank=True, help_text="Per judge: the alternative-annotator test.")
    batch = models.ForeignKey("annotation.Batch", null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+", help_text="The human batch of the escalated items, once created.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(alpha__gt=0, alpha__lt=1) & Q(delta__gt=0, delta__lt=1),
                                   name="escalation_levels_in_unit_interval"),
            models.CheckConstraint(condition=Q(status__in=JobStatus.values), name="escalation_plan_status_known"),
        ]

    def __str__(self) -> str:
        return f"escalation of {self.task_id} #{self.pk} ({self.status})"

    @property
    def pending(self) -> bool:
        return self.status in ACTIVE
