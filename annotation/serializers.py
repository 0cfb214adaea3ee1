"""Serializers of the annotator's loop API. What an annotator receives is built from the item's payload
and the task's public settings only; no serializer here can reach ItemGold."""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from tasks_app.models import Task

from .models import Annotation, Batch


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Items answered.")
    skipped = serializers.IntegerField(help_text="Items skipped (or flagged without an answer).")
    total = serializers.IntegerField(help_text="Items this annotator can get in the batch.")


class TaskBriefSerializer(serializers.ModelSerializer):
    """The task as an annotator needs it to answer: kind, scale, labels, axes, instructions (Markdown)."""

    text_direction = serializers.CharField(read_only=True)

    class Meta:
        model = Task
        fields = ("id", "name", "kind", "language", "text_direction", "labels", "scale_min", "scale_max",
                  "scale_step", "axes", "instructions")
        read_only_fields = fields

    def to_representation(self, task: Task) -> dict[str, Any]:
        data = super().to_representation(task)
        data["scale_min"], data["scale_max"], data["scale_step"] = task.scale  # the kind's defaults filled in
        return data


class ItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField(source="task.kind")
    payload = serializers.JSONField(help_text="What the annotator sees; its shape depends on the kind.")


class BatchBriefSerializer(serializers.ModelSerializer):
    class Meta:
        model = Batch
        fields = ("id", "name", "language", "due_date", "is_open")
        read_only_fields = fields


class NextItemSerializer(serializers.Serializer):
    item = ItemSerializer()
    task = TaskBriefSerializer()
    batch = BatchBriefSerializer()
    progress = ProgressSerializer()
    answer_url = serializers.CharField(help_text="POST {\"value\": ...} here.")
    skip_url = serializers.CharField()
    flag_url = serializers.CharField()


class MyBatchSerializer(serializers.Serializer):
    batch = BatchBriefSerializer()
    task = TaskBriefSerializer()
    progress = ProgressSerializer()
    next_url = serializers.CharField()


class AnnotationSerializer(serializers.ModelSerializer):
    """One's own answer. Only `value` can change (PATCH), which goes through the engine as a revision."""

    class Meta:
        model = Annotation
        fields = ("id", "item", "batch", "value", "skipped", "skip_reason", "flagged", "flag_comment", "started_at",
                  "submitted_at", "updated_at", "time_spent_ms", "source")
        read_only_fields = tuple(f for f in fields if f != "value")


class AnswerInSerializer(serializers.Serializer):
    value = serializers.JSONField(help_text="The answer in the kind's format (see the task kinds).")
    time_spent_ms = serializers.IntegerField(required=False, min_value=0, max_value=24 * 3600 * 1000,
                                             help_text="Time the client spent on the item; defaults to lease → submit.")
    flag_comment = serializers.CharField(required=False, allow_blank=True, max_length=2000,
                                         help_text="Non-empty: the answer is stored flagged with this comment.")


class AnnotationPatchSerializer(serializers.Serializer):
    value = serializers.JSONField()


class SkipInSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=500, help_text="Why the item is skipped.")
    time_spent_ms = serializers.IntegerField(required=False, min_value=0, max_value=24 * 3600 * 1000)


class FlagInSerializer(serializers.Serializer):
    comment = serializers.CharField(max_length=2000, help_text="What is wrong, e.g. ambiguous or broken text.")


class WriteResultSerializer(serializers.Serializer):
    annotation = AnnotationSerializer()
    created = serializers.BooleanField(help_text="False for an identical replay: no new row was stored.")
    revised = serializers.BooleanField(help_text="True when an earlier different answer was replaced.")
    progress = ProgressSerializer()


class ProblemSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField(required=False)
    field = serializers.CharField(required=False)

