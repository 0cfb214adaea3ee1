"""Serializers of the management API: annotators, batches, assignments, annotations (read) and progress.

They validate and shape data only; who may see what is decided by annotation.core.access, and changes go
through annotation.core.batches and annotation.core.assignment. No serializer reads gold (it is another table).
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers

from annotation.core.annotators import check_password
from annotation.core.batches import DEFAULT_HOLD_SECONDS
from annotation.core.models import Annotation, AnnotationRevision, Annotator, AnnotatorLanguage, Batch, BatchAssignee
from hume.roles import is_researcher
from tasks_app.core.models import Task, language_code


class LanguageSerializer(serializers.ModelSerializer):
    class Meta:
        model = AnnotatorLanguage
        fields = ("language", "proficiency")


class AnnotatorSerializer(serializers.ModelSerializer):
    """A profile; PATCH may change agent, active (deactivation releases holds) and the language list."""

    username = serializers.CharField(source="user.username", read_only=True)
    languages = LanguageSerializer(many=True, required=False)

    class Meta:
        model = Annotator
        fields = ("id", "username", "agent", "active", "languages", "created_at")
        read_only_fields = ("id", "username", "created_at")

    def validate_languages(self, value: list[dict[str, str]]) -> list[dict[str, str]]:
        codes = [entry["language"] for entry in value]
        if len(codes) != len(set(codes)):
            raise serializers.ValidationError("Each language may be listed once.")
        return value


class AnnotatorCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(write_only=True, required=False, allow_blank=True)
    agent = serializers.ChoiceField(choices=Annotator.Agent.choices, default=Annotator.Agent.HUMAN)
    languages = LanguageSerializer(many=True)

    def validate_username(self, value: str) -> str:
        if get_user_model().objects.filter(username=value).exists():
            raise serializers.ValidationError(f"A user named {value!r} already exists.")
        return value

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("password"):
            try:
                check_password(data["password"], username=data["username"])
            except DjangoValidationError as exc:
                raise serializers.ValidationError({"password": exc.messages}) from None
        return data


DEPRECATED_HOLD_FIELD = "lease_seconds"  # hold_seconds' old name, still accepted (docs/batches.md, "API")


class AcceptsOldHoldName(serializers.Serializer):
    """Reads `lease_seconds`, `hold_seconds`' name before 2026-12, as `hold_seconds` for one more version of the
    API; a request giving both with different values is refused naming the field. Responses say `hold_seconds`."""

    def to_internal_value(self, data: Any) -> Any:
        if hasattr(data, "keys") and DEPRECATED_HOLD_FIELD in data:
            data = {key: data[key] for key in data.keys()}
            old = data.pop(DEPRECATED_HOLD_FIELD)
            if "hold_seconds" in data and str(data["hold_seconds"]) != str(old):
                raise serializers.ValidationError({"hold_seconds": [
                    f"says {data['hold_seconds']!r} but the old field {DEPRECATED_HOLD_FIELD!r} says {old!r}"]})
            data.setdefault("hold_seconds", old)
        return super().to_internal_value(data)


class BatchSerializer(AcceptsOldHoldName, serializers.ModelSerializer):
    """A batch as readers see it; PATCH (admins) may change name, overlap, hold, due date and open state."""

    task_name = serializers.CharField(source="task.name", read_only=True)
    assignees = serializers.PrimaryKeyRelatedField(many=True, read_only=True)
    created_by = serializers.CharField(source="created_by.username", read_only=True, default=None)

    class Meta:
        model = Batch
        fields = ("id", "task", "task_name", "name", "language", "overlap", "hold_seconds", "due_date", "is_open",
                  "assignees", "created_by", "created_at")
        read_only_fields = ("id", "task", "task_name", "language", "assignees", "created_by", "created_at")

    def to_representation(self, batch: Batch) -> dict[str, Any]:
        """An annotator reading a batch sees their own seat only: who else labels it is not theirs to know."""
        data = super().to_representation(batch)
        request = self.context.get("request")
        if request is not None and not is_researcher(request.user):
            own = getattr(getattr(request.user, "annotator", None), "pk", None)
            data["assignees"] = [pk for pk in data["assignees"] if pk == own]
        return data


class BatchCreateSerializer(AcceptsOldHoldName, serializers.Serializer):
    """A new batch from a task's pool. Overlap null (or preset "hume") applies HUME's k = 2 for eng, else 1."""

    task = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all())
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    language = serializers.CharField(max_length=16, required=False, allow_blank=True, validators=[language_code])
    overlap = serializers.IntegerField(min_value=1, max_value=50, required=False, allow_null=True)
    preset = serializers.ChoiceField(choices=["hume"], required=False)
    hold_seconds = serializers.IntegerField(min_value=1, default=DEFAULT_HOLD_SECONDS)
    due_date = serializers.DateField(required=False, allow_null=True)
    annotators = serializers.PrimaryKeyRelatedField(queryset=Annotator.objects.all(), many=True, required=False)
    override_reason = serializers.CharField(required=False, allow_blank=True, default="")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data.get("preset") == "hume" and data.get("overlap") is not None:
            raise serializers.ValidationError({"overlap": "Give either overlap or preset 'hume', not both."})
        return data


class BulkBatchSerializer(AcceptsOldHoldName, serializers.Serializer):
    """One batch per task of a multilingual task: the tasks sharing `mteb_task_name`, or the `tasks` listed."""

    mteb_task_name = serializers.CharField(required=False, allow_blank=True)
    tasks = serializers.PrimaryKeyRelatedField(queryset=Task.objects.all(), many=True, required=False)
    overlap = serializers.IntegerField(min_value=1, max_value=50, required=False, allow_null=True)
    assign_speakers = serializers.BooleanField(default=True)
    hold_seconds = serializers.IntegerField(min_value=1, default=DEFAULT_HOLD_SECONDS)
    due_date = serializers.DateField(required=False, allow_null=True)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        name = data.get("mteb_task_name")
        if name:
            data["tasks"] = list(Task.objects.filter(mteb_task_name=name).order_by("language", "name"))
            if not data["tasks"]:
                raise serializers.ValidationError({"mteb_task_name": f"No task has the MTEB task name {name!r}."})
        elif not data.get("tasks"):
            raise serializers.ValidationError({"tasks": "Give mteb_task_name or a list of task ids."})
        return data


class AssignSerializer(serializers.Serializer):
    annotators = serializers.PrimaryKeyRelatedField(queryset=Annotator.objects.all(), many=True, allow_empty=False)
    override_reason = serializers.CharField(required=False, allow_blank=True, default="")


class AssignmentSerializer(serializers.ModelSerializer):
    """An annotator on a batch; admins may PATCH the override reason."""

    batch_name = serializers.CharField(source="batch.name", read_only=True)
    annotator_name = serializers.CharField(source="annotator.user.username", read_only=True)

    class Meta:
        model = BatchAssignee
        fields = ("id", "batch", "batch_name", "annotator", "annotator_name", "override_reason", "assigned_at")
        read_only_fields = ("id", "batch", "batch_name", "annotator", "annotator_name", "assigned_at")


class RevisionSerializer(serializers.ModelSerializer):
    class Meta:
        model = AnnotationRevision
        fields = ("value", "skipped", "previous_submitted_at", "replaced_at")


class AnswerHistorySerializer(serializers.ModelSerializer):
    """An answer with its earlier values. The annotator sees their own; researchers and admins all."""

    item_external_id = serializers.CharField(source="item.external_id", read_only=True)
    annotator_name = serializers.CharField(source="annotator.user.username", read_only=True)
    revisions = RevisionSerializer(many=True, read_only=True)

    class Meta:
        model = Annotation
        fields = ("id", "item", "item_external_id", "batch", "annotator", "annotator_name", "value", "skipped",
                  "skip_reason", "flagged", "flag_comment", "started_at", "submitted_at", "updated_at",
                  "time_spent_ms", "source", "revisions")
        read_only_fields = fields


class AnnotatorProgressSerializer(serializers.Serializer):
    annotator = serializers.IntegerField(source="annotator_id")
    name = serializers.CharField()
    agent = serializers.CharField()
    status = serializers.CharField()
    done = serializers.IntegerField()
    skipped = serializers.IntegerField()
    flagged = serializers.IntegerField()
    held = serializers.IntegerField()
    remaining = serializers.IntegerField()
    median_ms = serializers.FloatField(allow_null=True)
    last_submit = serializers.DateTimeField(allow_null=True)


class IssueSerializer(serializers.Serializer):
    annotation = serializers.IntegerField(source="pk")
    item_external_id = serializers.CharField(source="item.external_id")
    annotator = serializers.CharField(source="annotator.name")
    skipped = serializers.BooleanField()
    skip_reason = serializers.CharField()
    flagged = serializers.BooleanField()
    flag_comment = serializers.CharField()
    submitted_at = serializers.DateTimeField()


class BatchProgressSerializer(serializers.Serializer):
    batch = serializers.IntegerField(source="batch.pk")
    items = serializers.IntegerField()
    needed = serializers.IntegerField()
    done = serializers.IntegerField()
    held = serializers.IntegerField()
    remaining = serializers.IntegerField()
    complete_items = serializers.IntegerField()
    percent = serializers.IntegerField()
    median_ms = serializers.FloatField(allow_null=True)
    annotators = AnnotatorProgressSerializer(many=True)
    issues = IssueSerializer(many=True)
