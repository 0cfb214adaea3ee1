"""A campaign: a task, an LLM judge that labels every item (the campaign starts the judge's run when it has not),
a target half-width, the people and their batches; its state in words and its last review (docs/campaigns.md).
Foreign keys are named by string (agreement/models.py imports this module where Django reads the app's models)."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from hume.jobs.models import Job
from measures.campaign.engine import BUDGET_SPENT, COLLECTING, DONE, POOL_LABELLED, TARGET_REACHED

STOPPED_BY_HAND = "stopped by hand"
WAITING_FOR_THE_JUDGE = "waiting for the judge"
FAILED = "failed"
JUDGE_RUN_FAILED = "the judge's run failed"
START_REFUSED = "the start was refused"  # once the judge's run finished, the checks that need its numbers


class Campaign(models.Model):
    """A study of one task's estimand that draws uniform batches for its people until its interval is within
    ±`target_half_width` (at `level`), its budget is spent, or someone stops it."""

    class State(models.TextChoices):
        WAITING_FOR_THE_JUDGE = WAITING_FOR_THE_JUDGE, WAITING_FOR_THE_JUDGE
        COLLECTING = COLLECTING, "collecting"
        DONE = DONE, "done"
        FAILED = FAILED, "failed"

    class Reason(models.TextChoices):
        NONE = "", "—"
        TARGET_REACHED = TARGET_REACHED, TARGET_REACHED
        BUDGET_SPENT = BUDGET_SPENT, BUDGET_SPENT
        POOL_LABELLED = POOL_LABELLED, POOL_LABELLED
        STOPPED_BY_HAND = STOPPED_BY_HAND, STOPPED_BY_HAND
        JUDGE_RUN_FAILED = JUDGE_RUN_FAILED, JUDGE_RUN_FAILED
        START_REFUSED = START_REFUSED, START_REFUSED

    class Sampling(models.TextChoices):
        UNIFORM = "uniform", "uniform"
        CONFIDENCE = "confidence", "by the judge's confidence"

    name = models.CharField(max_length=200, unique=True)
    task = models.ForeignKey("tasks_app.Task", on_delete=models.CASCADE, related_name="campaigns")
    judge = models.ForeignKey("annotation.Annotator", on_delete=models.PROTECT, related_name="campaigns_judged")
    judge_run = models.ForeignKey("annotation.LLMRun", null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="campaigns",
                                  help_text="The judge's run the campaign started (or waited for) over the task.")
    estimand = models.CharField(max_length=200)
    target_half_width = models.FloatField()
    level = models.FloatField(default=0.95)
    budget_labels = models.PositiveIntegerField(null=True, blank=True, help_text="Most human labels; empty: the pool.")
    price_per_label = models.DecimalField(max_digits=10, decimal_places=4, null=True, blank=True)
    people = models.ManyToManyField("annotation.Annotator", related_name="campaigns")
    study_link = models.OneToOneField("annotation.StudyLink", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="campaign",
                                      help_text="People through a crowd study link that follows the campaign's "
                                                "batches (study_links.py); empty: the named people.")
    study_settings = models.JSONField(default=dict, blank=True,
                                      help_text="The study link asked at the start (made or taken with the first "
                                                "batch); empty: no study link.")
    overlap = models.PositiveSmallIntegerField(default=1)
    sampling = models.CharField(max_length=20, choices=Sampling.choices, default=Sampling.UNIFORM)
    seed = models.IntegerField(default=0)
    t_star = models.PositiveIntegerField(null=True, blank=True,
                                         help_text="The labels the sequence's bets are tuned for, fixed when the "
                                                   "first batch is planned.")
    plan = models.JSONField(default=dict, help_text="The start plan from the judge alone.")
    state = models.CharField(max_length=30, choices=State.choices, default=State.COLLECTING)
    reason = models.CharField(max_length=40, choices=Reason.choices, blank=True, default="")
    problem = models.TextField(blank=True, help_text="Failed: what went wrong, in words.")
    review = models.JSONField(default=dict, blank=True, help_text="The last review (measures/campaign/engine.py).")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    batches = models.ManyToManyField("annotation.Batch", related_name="campaigns", blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(target_half_width__gt=0), name="campaign_target_positive"),
            models.CheckConstraint(condition=Q(level__gt=0) & Q(level__lt=1), name="campaign_level_between_0_and_1"),
            models.CheckConstraint(condition=Q(overlap__gte=1), name="campaign_overlap_at_least_one"),
        ]

    def __str__(self) -> str:
        return f"campaign {self.name} ({self.state}{', ' + self.reason if self.reason else ''})"


class CampaignReview(Job):
    """The campaign's review as a job of the layer (hume/jobs/, docs/architecture.md "The job layer"): one row per
    campaign, asked again by answers (debounced, review_queue.py), claimed by the worker that runs it
    (review_job.py), and sent again by the layer's recovery when its worker died (a lapsed lease) or its message
    was lost (queued longer than a lease when a worker starts); capped like every type."""

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, primary_key=True, related_name="review_job")
    requested_at = models.DateTimeField(null=True, blank=True,
                                        help_text="When answers last asked for a review: the one mark of a review "
                                                  "asked (a run started earlier is followed by another; the "
                                                  "debounce reads it, review_queue.py).")

    def __str__(self) -> str:
        return f"review of campaign {self.campaign_id} ({self.status})"
