"""API shapes for tasks and dataset import. No serializer here reads gold; counts come annotated by the queryset."""
from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from hume.lib.upload_api import ImportProblemSerializer

from .core.kinds import kind_choices
from .importing.options import FORMATS
from .models import Task


class TaskSerializer(serializers.ModelSerializer):
    n_items = serializers.IntegerField(read_only=True)
    n_with_gold = serializers.IntegerField(source="n_gold", read_only=True)
    scale = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = ["id", "name", "kind", "language", "text_direction", "labels", "scale", "axes", "instructions",
                  "mteb_task_name", "mteb_subset", "dataset_revision", "sample_size", "sample_seed", "n_items",
                  "n_with_gold", "created_at", "updated_at"]
        read_only_fields = fields

    @extend_schema_field(serializers.DictField(allow_null=True, help_text="min, max, step; null for unscaled kinds"))
    def get_scale(self, task: Task) -> dict[str, Any] | None:
        if task.kind_definition.default_scale is None:
            return None
        lo, hi, step = task.scale
        return {"min": lo, "max": hi, "step": step}


class KindField(serializers.ChoiceField):
    """A task kind, checked against the registry when the request comes rather than against a list taken at
    start-up, so every registered kind is accepted (the schema's enum is the registry's kinds, too)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=kind_choices(), **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        self.choices = kind_choices()
        return super().to_internal_value(data)


class TaskImportRequestSerializer(serializers.Serializer):
    """The multipart body of POST /api/v1/tasks/import/: the file and the CLI's options."""

    file = serializers.FileField(help_text="JSONL, or CSV for flat kinds (see docs/import.md)")
    name = serializers.CharField(max_length=200)
    kind = KindField()
    language = serializers.CharField(max_length=16, help_text="MTEB-style code, e.g. eng-Latn")
    labels = serializers.CharField(required=False, allow_blank=True, help_text="a,b,c (classification)")
    scale = serializers.CharField(required=False, allow_blank=True, help_text="MIN,MAX")
    step = serializers.CharField(required=False, allow_blank=True)
    axes = serializers.CharField(required=False, allow_blank=True, help_text="a,b,c (likert)")
    instructions = serializers.CharField(required=False, allow_blank=True, trim_whitespace=False,
                                         help_text="Markdown")
    mteb_task_name = serializers.CharField(required=False, allow_blank=True)
    mteb_subset = serializers.CharField(required=False, allow_blank=True)
    dataset_revision = serializers.CharField(required=False, allow_blank=True)
    format = serializers.ChoiceField(choices=FORMATS, required=False, help_text="default: from the file name")
    update_gold = serializers.BooleanField(required=False, default=False,
                                           help_text="let the file change gold imported before")


class ImportSummarySerializer(serializers.Serializer):
    task_id = serializers.IntegerField()
    task = serializers.CharField()
    kind = serializers.CharField()
    language = serializers.CharField()
    created_task = serializers.BooleanField()
    added = serializers.IntegerField()
    added_with_gold = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    gold_updated = serializers.IntegerField()
    labels = serializers.ListField(child=serializers.CharField())
    updated_fields = serializers.ListField(child=serializers.CharField())
    warnings = serializers.ListField(child=serializers.CharField())


class ImportJobSerializer(serializers.Serializer):
    """A big import run by a worker (tasks_app/import_jobs.py): poll `status_url` until `status` is done
    (`summary` as the 201 body) or failed (`problems` as the 400 body's `errors`)."""

    id = serializers.IntegerField()
    file = serializers.CharField(source="file_name")
    size = serializers.IntegerField()
    bytes_read = serializers.IntegerField()
    percent = serializers.IntegerField()
    status = serializers.CharField(help_text="queued, running, done or failed")
    problems = ImportProblemSerializer(many=True)
    summary = ImportSummarySerializer(allow_null=True)
    status_url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_status_url(self, job) -> str:
        return reverse("api-task-import-status", kwargs={"job_id": job.pk})

    def get_page_url(self, job) -> str:
        return reverse("tasks_app:import-job", kwargs={"job_id": job.pk})
