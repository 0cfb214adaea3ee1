"""Tasks and their items. Gold lives in its own table so no query for what an annotator sees can carry it."""
from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import F, Q

from hume.jobs.models import Job

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
        """The items batches are drawn from: the sampled subset when the task has one, else all items.
        Check items (attention and practice, ItemCheck) are never drawn into batches."""
        return self.filter(Q(task__sample_size__isnull=True) | Q(in_sample=True), item_check__isnull=True)


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


class ItemCheck(models.Model):
    """An item that is a check, not data (docs/import.md, "Check items"): an attention check (an instructed
    response, `expected` never shown) or a practice item (`expected` and `feedback` shown after answering).
    Check items are never drawn into batches (ItemQuerySet.in_pool), so no report reads them."""

    class Role(models.TextChoices):
        ATTENTION = "attention", "attention check"
        PRACTICE = "practice", "practice item"

    item = models.OneToOneField(Item, on_delete=models.CASCADE, primary_key=True, related_name="item_check")
    role = models.CharField(max_length=16, choices=Role.choices)
    expected = models.JSONField()
    feedback = models.TextField(blank=True)

    def __str__(self) -> str:
        return f"{self.role} check {self.item_id}"


class ImportJob(Job):
    """A dataset upload too big to import inside the web request (over IMPORT_IN_BACKGROUND_BYTES): the file is
    stored under IMPORT_SPOOL_DIR and a worker imports it (tasks_app/import_jobs.py), as atomically as the
    page would. `problems` holds what a refused import said (file, line, field, message); `summary` what a
    finished one did (ImportSummary.as_dict()). Its claim, lease and status are the job layer's
    (hume/jobs/): a worker killed mid-import leaves it to the next worker within about a lease."""

    created_by = models.ForeignKey("auth.User", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    file_name = models.CharField(max_length=255, help_text="The uploaded file's name (no folders).")
    stored_as = models.CharField(max_length=64, help_text="The stored copy's name inside IMPORT_SPOOL_DIR.")
    size = models.PositiveBigIntegerField()
    bytes_read = models.PositiveBigIntegerField(default=0)
    options = models.JSONField(default=dict, help_text="The import's options, as the form or API sent them.")
    problems = models.JSONField(default=list, blank=True)
    summary = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"import of {self.file_name} ({self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def percent(self) -> int:
        if self.status == self.Status.DONE:
            return 100
        return min(99, int(100 * self.bytes_read / self.size)) if self.size else 0
