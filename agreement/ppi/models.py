"""A task's stored PPI estimates, one row per (task, judge): the request, the job's state and the document.

The row is a job of the job layer (hume/jobs/), as a report is: a worker computes only after its claim (one
conditional UPDATE) changed the row, so a duplicated message is harmless, and it renews the lease while it
computes, so a killed worker's estimate is sent to another once the lease lapses. Django registers these models
from agreement/models.py (app `agreement`).
"""
from __future__ import annotations

from django.db import models
from django.db.models import Q

from hume.jobs.models import Job


class PPIEstimate(Job):
    """The latest PPI document of one task with one judge (docs/ppi.md), and the state of its computation."""

    task = models.ForeignKey("tasks_app.Task", on_delete=models.CASCADE, related_name="ppi_estimates")
    judge = models.CharField(max_length=150, help_text="The judge's annotator name.")
    alpha = models.FloatField(default=0.05)
    target_half_width = models.FloatField(null=True, blank=True)
    document = models.JSONField(null=True, blank=True, help_text="The PPI document (docs/ppi.md, 'The JSON').")
    requested_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["task", "judge"]
        constraints = [
            models.UniqueConstraint(fields=["task", "judge"], name="ppi_estimate_once_per_task_judge"),
            models.CheckConstraint(condition=Q(alpha__gt=0) & Q(alpha__lt=1), name="ppi_alpha_between_0_and_1"),
            models.CheckConstraint(condition=Q(target_half_width__isnull=True) | Q(target_half_width__gt=0),
                                   name="ppi_target_half_width_positive"),
        ]

    def __str__(self) -> str:
        return f"PPI of task {self.task_id} with {self.judge} ({self.status})"


class PPIDraw(models.Model):
    """How an actively drawn batch was drawn (measures/ppi/active.py): each pool item's draw probability and
    every draw in order, repeats kept, so the estimate can weigh each labelled draw by 1/(M·p)."""

    batch = models.OneToOneField("annotation.Batch", on_delete=models.CASCADE, related_name="ppi_draw")
    judges = models.JSONField(default=list, help_text="The judges whose spread gave each item's uncertainty.")
    uniform_share = models.FloatField(help_text="τ: the share of the probability spread uniformly.")
    item_ids = models.JSONField(help_text="The pool's item ids when drawn, aligned with probabilities.")
    probabilities = models.JSONField(help_text="Each pool item's probability per draw.")
    draws = models.JSONField(help_text="Item ids drawn, in order, repeats kept.")
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"active draw of batch {self.batch_id} ({len(self.draws)} draws)"
