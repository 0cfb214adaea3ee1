"""Tasks and their items. Gold lives in its own table so no query for what an annotator sees can carry it."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q

from . import limits
from .kinds import KINDS, TaskKind, get_kind, kind_choices

language_code = RegexValidator(
    r"^[a-z]{3}-[A-Z][a-z]{3}$", "Use an MTEB-style language code such as eng-Latn or ara-Arab."
)

RTL_SCRIPTS = {"Arab", "Hebr", "Thaa", "Syrc", "Nkoo", "Adlm"}


class Task(models.Model):
    """One annotation task: a dataset of one kind, in one language, with its instructions and source."""

    name = models.CharField(max_length=200, unique=True)
    kind = models.CharField(max_length=32, choices=kind_choices)
    language = models.CharField(max_length=16, validators=[language_code])
    labels = models.JSONField(default=list, blank=True, help_text="Label set (classification).")
    scale_min = models.FloatField(null=True, blank=True)
    scale_max = models.FloatField(null=True, blank=True)
    scale_step = models.FloatField(null=True, blank=True)
    axes = models.JSONField(default=list, blank=True, help_text="Likert axes, e.g. overall, coherence.")
    instructions = models.TextField(blank=True, help_text="Markdown; rendered safely.")
    mteb_task_name = models.CharField(max_length=200, blank=True)
    mteb_subset = models.CharField(max_length=100, blank=True, help_text="MTEB hf_subset, e.g. default or ar.")
    dataset_revision = models.CharField(max_length=100, blank=True)
    sample_size = models.PositiveIntegerField(null=True, blank=True)
    sample_seed = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(scale_min__isnull=True) | Q(scale_max__isnull=True) | Q(scale_min__lt=F("scale_max")),
                name="task_scale_min_below_max",
            ),
            models.CheckConstraint(
                condition=Q(scale_step__isnull=True) | Q(scale_step__gt=0), name="task_scale_step_positive"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}, {self.language})"

    @property
    def kind_definition(self) -> TaskKind:
        return get_kind(self.kind)

    @property
    def scale(self) -> tuple[float, float, float | None]:
        return self.kind_definition.scale(self)

    @property
    def text_direction(self) -> str:
        """The page direction for this task's language; item texts still use dir="auto"."""
        script = self.language.split("-")[-1]
        return "rtl" if script in RTL_SCRIPTS else "ltr"

    def clean(self) -> None:
        super().clean()
        if self.kind not in KINDS:
            return  # the kind field's own validation says so
        problems = limits.task_problems(self.labels or [], self.axes or [], self.scale,
                                        buttons=self.kind_definition.needs_axes)
        if problems:
            raise ValidationError(problems)

    def validate_answer(self, value: Any, payload: dict[str, Any]) -> Any:
        limits.check_answer(value)  # sizes first, so no kind quotes a 9 MB value back
        return self.kind_definition.validate_answer(value, self, payload)


class ItemQuerySet(models.QuerySet["Item"]):
    def in_pool(self) -> ItemQuerySet:
        """The items batches are drawn from: the sampled subset when the task has one, else all items."""
        return self.filter(Q(task__sample_size__isnull=True) | Q(in_sample=True))


class Item(models.Model):
    """What an annotator sees (payload). Gold is in ItemGold, never selected with the item."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="items")
    uid = models.CharField(max_length=64, unique=True, help_text="sha256 of task and content.")
    external_id = models.CharField(max_length=200)
    position = models.PositiveIntegerField(help_text="Order in the imported file.")
    payload = models.JSONField()
    # Which system produced the item and which group it belongs to, for per-system estimates (docs/ppi.md).
    # Kept beside the payload, not in it: the loop sends annotators the whole payload, and a system's name
    # must not reach the people rating its output.
    system = models.CharField(max_length=200, blank=True, default="", db_default="")
    group = models.CharField(max_length=200, blank=True, default="", db_default="")
    in_sample = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ItemQuerySet.as_manager()

    class Meta:
        ordering = ["task", "position"]
        constraints = [models.UniqueConstraint(fields=["task", "external_id"], name="item_unique_external_id")]
        indexes = [models.Index(fields=["task", "in_sample"])]

    def __str__(self) -> str:
        return f"{self.task.name}#{self.external_id}"


class ItemGold(models.Model):
    """The gold answer of an item, kept apart: only import, reports and admins ever read this table."""

    item = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="gold")
    value = models.JSONField()

    def __str__(self) -> str:
        return f"gold for {self.item_id}"
