"""Serializers of the annotator's loop API. What an annotator receives is built from the item's payload
and the task's public settings only; no serializer here can reach ItemGold.

`next_item_data` and `write_result_data` build the loop's two hot responses directly: DRF's nested
ModelSerializers spent ~1.5 ms per request building their fields, a tenth of the whole request.
NextItemSerializer and WriteResultSerializer stay their documented shape (OpenAPI), and a test holds each pair
equal.
"""
from __future__ import annotations

from typing import Any

from rest_framework import serializers

from annotation.models import Annotation, Batch
from tasks_app.models import Item, Task


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
                                             help_text="Time the client spent on the item; defaults to hold → submit.")
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


class ProblemSerializer(serializers.Serializer):
    detail = serializers.CharField()
    code = serializers.CharField(required=False)
    field = serializers.CharField(required=False)



def task_brief(task: Task) -> dict[str, Any]:
    """TaskBriefSerializer(task).data, built directly."""
    scale_min, scale_max, scale_step = task.scale
    return {"id": task.pk, "name": task.name, "kind": task.kind, "language": task.language,
            "text_direction": task.text_direction, "labels": task.labels, "scale_min": scale_min,
            "scale_max": scale_max, "scale_step": scale_step, "axes": task.axes, "instructions": task.instructions}


def batch_brief(batch: Batch) -> dict[str, Any]:
    """BatchBriefSerializer(batch).data, built directly."""
    due = batch.due_date.isoformat() if batch.due_date is not None else None
    return {"id": batch.pk, "name": batch.name, "language": batch.language, "due_date": due, "is_open": batch.is_open}


def next_item_data(item: Item, batch: Batch, progress: dict[str, int], urls: dict[str, str]) -> dict[str, Any]:
    """NextItemSerializer(...).data for the loop's hottest response: the item's id, kind and payload (never gold),
    the task and batch briefs, the annotator's progress and where to answer, skip or flag."""
    return {"item": {"id": item.pk, "kind": item.task.kind, "payload": item.payload},
            "task": task_brief(batch.task), "batch": batch_brief(batch),
            "progress": {"done": progress["done"], "skipped": progress["skipped"], "total": progress["total"]},
            **urls}


_DATETIME = serializers.DateTimeField()  # DRF's own formatting (ISO 8601, "Z" for UTC), unbound


def annotation_data(annotation: Annotation) -> dict[str, Any]:
    """AnnotationSerializer(annotation).data, built directly."""
    a = annotation
    return {"id": a.pk, "item": a.item_id, "batch": a.batch_id, "value": a.value, "skipped": a.skipped,
            "skip_reason": a.skip_reason, "flagged": a.flagged, "flag_comment": a.flag_comment,
            "started_at": _DATETIME.to_representation(a.started_at),
            "submitted_at": _DATETIME.to_representation(a.submitted_at),
            "updated_at": _DATETIME.to_representation(a.updated_at), "time_spent_ms": a.time_spent_ms,
            "source": a.source}


def write_result_data(annotation: Annotation, created: bool, revised: bool) -> dict:
    """WriteResultSerializer(...).data for an answer, skip or flag: what was written, no progress (the next
    item brings it; computing it here too was a third of the database's work per answer)."""
    return {"annotation": annotation_data(annotation), "created": created, "revised": revised}
