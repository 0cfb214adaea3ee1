"""Annotators, batches, holds and annotations.

The database holds the invariants: one annotation per (item, annotator), one hold per (batch item,
annotator), overlap k ≥ 1, and an answer that is either a value or a skip.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from tasks_app.core.models import Item, Task, language_code


class AnnotatorQuerySet(models.QuerySet["Annotator"]):
    def counted(self) -> AnnotatorQuerySet:
        """The annotators whose answers count (not excluded): Annotation.objects.counted() by annotator."""
        return self.filter(excluded_at__isnull=True)


class Annotator(models.Model):
    """A person or a language model that answers items. LLM annotators are scored like humans."""

    class Agent(models.TextChoices):  # what answers: a person or a language model (docs/style.md, "Naming")
        HUMAN = "human", "human"
        LLM = "llm", "LLM"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="annotator")
    agent = models.CharField(max_length=8, choices=Agent.choices, default=Agent.HUMAN)
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # An excluded annotator's answers stay stored but count in no number (Annotation.objects.counted); the report
    # lists the exclusion and the exports mark their answers (Annotation.objects.marked).
    excluded_at = models.DateTimeField(null=True, blank=True)
    excluded_reason = models.CharField(max_length=500, blank=True)

    objects = AnnotatorQuerySet.as_manager()

    class Meta:
        ordering = ["user__username"]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        return self.user.get_username()

    def language_codes(self) -> set[str]:
        return {lang.language for lang in self.languages.all()}


class AnnotatorLanguage(models.Model):
    class Proficiency(models.TextChoices):
        NATIVE = "native", "native"
        NEAR_NATIVE = "near-native", "near-native"
        FLUENT = "fluent", "fluent"

    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="languages")
    language = models.CharField(max_length=16, validators=[language_code])
    proficiency = models.CharField(max_length=16, choices=Proficiency.choices, default=Proficiency.NATIVE)

    class Meta:
        ordering = ["annotator", "language"]
        constraints = [models.UniqueConstraint(fields=["annotator", "language"], name="annotator_language_once")]

    def __str__(self) -> str:
        return f"{self.annotator}: {self.language} ({self.proficiency})"


class Batch(models.Model):
    """A set of a task's items handed to chosen annotators, each item to be answered by k of them."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="batches")
    name = models.CharField(max_length=200)
    language = models.CharField(max_length=16, validators=[language_code])
    overlap = models.PositiveSmallIntegerField(default=1, help_text="k: different annotators per item.")
    hold_seconds = models.PositiveIntegerField(default=900)
    assignees = models.ManyToManyField(Annotator, through="BatchAssignee", related_name="batches")
    due_date = models.DateField(null=True, blank=True)
    is_open = models.BooleanField(default=True)
    hands_out = models.BooleanField(
        default=True, help_text="False: stopped (a campaign reached its end): no new item is handed out, but an "
                                "item a person holds can still be answered (docs/batches.md).")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "name"]
        constraints = [
            models.UniqueConstraint(fields=["task", "name"], name="batch_name_unique_per_task"),
            models.CheckConstraint(condition=Q(overlap__gte=1), name="batch_overlap_at_least_one"),
            models.CheckConstraint(condition=Q(hold_seconds__gte=1), name="batch_hold_positive"),
        ]
        verbose_name_plural = "batches"

    def __str__(self) -> str:
        return f"{self.name} ({self.task.name}, k={self.overlap})"


class BatchAssignee(models.Model):
    """An annotator on a batch. A language mismatch is allowed only with a recorded reason."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE)
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE)
    override_reason = models.TextField(blank=True)
    assigned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    assigned_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch", "annotator"], name="assignee_once_per_batch")]

    def __str__(self) -> str:
        return f"{self.annotator_id} on batch {self.batch_id}"


class BatchItem(models.Model):
    """An item's place in a batch; its row is what the assignment engine locks."""

    batch = models.ForeignKey(Batch, on_delete=models.CASCADE, related_name="batch_items")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="batch_items")
    position = models.PositiveIntegerField()
    # Kept by annotation.core.assignment under this row's lock so next_item can skip full items without
    # counting; the overlap check itself always counts Annotation and Hold rows, so drift cannot overshoot k.
    human_answers = models.PositiveIntegerField(
        default=0, help_text="Non-skipped answers by human annotators in this batch (a cache the engine keeps)."
    )

    class Meta:
        ordering = ["batch", "position"]
        constraints = [models.UniqueConstraint(fields=["batch", "item"], name="item_once_per_batch")]
        # (batch, human_answers, position): progress counts a batch's items with room on every loop request (an
        # index-only scan instead of a visit to every row of the batch), and next_item finds the first position
        # with room in a few index probes instead of walking past every full item before it.
        indexes = [models.Index(fields=["batch", "position"]),
                   models.Index(fields=["batch", "human_answers", "position"], name="batchitem_room_idx")]

    def __str__(self) -> str:
        return f"item {self.item_id} in batch {self.batch_id}"


class Hold(models.Model):
    """An item reserved for one annotator until expires_at; live holds count toward overlap k. The assignment's
    word, apart from the job layer's lease on a job (hume/jobs/lease.py; docs/style.md, "Naming")."""

    batch_item = models.ForeignKey(BatchItem, on_delete=models.CASCADE, related_name="holds")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="holds")
    held_at = models.DateTimeField()
    expires_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["batch_item", "annotator"], name="one_hold_per_annotator_item")]
        # expires_at: the live holds of a batch (progress, on every loop request) are a short range of this index;
        # a scan of the table would also walk every hold answered since the last vacuum.
        indexes = [models.Index(fields=["annotator", "expires_at"], name="hold_annotator_expires_idx"),
                   models.Index(fields=["expires_at"], name="hold_expires_idx")]

    def __str__(self) -> str:
        return f"hold of {self.batch_item_id} to {self.annotator_id} until {self.expires_at:%H:%M:%S}"


# The one rule of exclusion (docs/crowd.md, "Exclusion"): an answer counts in a number (a report, an estimate, a
# sequence, an escalation calibration, an item table, a comparison) only while its annotator is not excluded. Every
# reader of answers for a number goes through `AnnotationQuerySet.counted`; exports keep every answer and mark the
# excluded ones through `AnnotationQuerySet.marked` (the same condition, as a column).
COUNTED = Q(annotator__excluded_at__isnull=True)


class AnnotationQuerySet(models.QuerySet["Annotation"]):
    def counted(self) -> AnnotationQuerySet:
        """The answers that count: those of annotators nobody excluded (an excluded annotator's stay stored)."""
        return self.filter(COUNTED)

    def marked(self) -> AnnotationQuerySet:
        """Every answer, each with `excluded` (True when its annotator is excluded: it counts in no number)."""
        return self.annotate(excluded=models.ExpressionWrapper(~COUNTED, output_field=models.BooleanField()))


class Annotation(models.Model):
    """One answer of one annotator to one item (or a skip). Revisions keep the earlier values."""

    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="annotations")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="annotations")
    batch = models.ForeignKey(Batch, null=True, blank=True, on_delete=models.SET_NULL, related_name="annotations")
    value = models.JSONField(null=True, blank=True)
    skipped = models.BooleanField(default=False)
    skip_reason = models.CharField(max_length=500, blank=True)
    flagged = models.BooleanField(default=False)
    flag_comment = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    submitted_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    time_spent_ms = models.PositiveIntegerField(null=True, blank=True)
    source = models.CharField(max_length=32, default="browser", help_text="browser, api, import, llm")
    confidence = models.FloatField(
        null=True, blank=True,
        help_text="A machine answer's confidence in [0, 1] (LLM runs, or imported): calibrated escalation reads it "
                  "(docs/escalation.md). None for people and where unknown.")

    objects = AnnotationQuerySet.as_manager()

    class Meta:
        ordering = ["item", "annotator"]
        constraints = [
            models.UniqueConstraint(fields=["item", "annotator"], name="one_annotation_per_item_annotator"),
            models.CheckConstraint(condition=Q(skipped=True) | Q(value__isnull=False), name="annotation_value_or_skip"),
            models.CheckConstraint(condition=Q(confidence__isnull=True) | Q(confidence__gte=0.0, confidence__lte=1.0),
                                   name="annotation_confidence_in_unit_interval"),
        ]
        indexes = [models.Index(fields=["batch", "annotator"])]

    def __str__(self) -> str:
        return f"{self.annotator} on {self.item}"


class AnnotationRevision(models.Model):
    """A value an annotation had before it was revised, with when it was replaced."""

    annotation = models.ForeignKey(Annotation, on_delete=models.CASCADE, related_name="revisions")
    value = models.JSONField(null=True, blank=True)
    skipped = models.BooleanField(default=False)
    previous_submitted_at = models.DateTimeField()
    replaced_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["annotation", "replaced_at"]

    def __str__(self) -> str:
        return f"revision of annotation {self.annotation_id} replaced at {self.replaced_at}"
