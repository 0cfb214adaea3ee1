"""POST /api/v1/annotations/import/ (admins): the same annotation import as `manage.py import_annotations`."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from annotation.answer_import import import_annotations
from hume.lib.upload_api import ImportErrorsSerializer, upload_response
from hume.roles import IsAdmin
from tasks_app.models import Task


class AnnotationImportRequestSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="JSONL: one annotation per line (see docs/import.md)")
    task = serializers.CharField(help_text="the task's name (or its numeric id)")
    replace = serializers.BooleanField(required=False, default=False,
                                       help_text="replace different earlier answers, keeping them as revisions")

    def validate_task(self, value: str) -> Task:
        task = Task.objects.filter(name=value).first()
        if task is None and value.isdigit():
            task = Task.objects.filter(pk=int(value)).first()
        if task is None:
            raise serializers.ValidationError(f"no task named {value!r}")
        return task


class AnnotationImportSummarySerializer(serializers.Serializer):
    task = serializers.CharField()
    added = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    replaced = serializers.IntegerField()
    annotators_created = serializers.ListField(child=serializers.CharField())


@extend_schema(
    summary="Import annotations",
    description="Annotations made elsewhere, validated like a browser submit; atomic; importing the same file "
                "twice stores each answer once. Errors name file, line and field.",
    request={"multipart/form-data": AnnotationImportRequestSerializer},
    responses={201: AnnotationImportSummarySerializer, 400: ImportErrorsSerializer,
               403: OpenApiResponse(description="not an admin")},
)
@api_view(["POST"])
@parser_classes([MultiPartParser])
@permission_classes([IsAdmin])
def import_annotations_view(request: Request) -> Response:
    def run(data: dict[str, Any], filename: str) -> Any:
        return import_annotations(data["file"], filename, data["task"], replace=data["replace"])

    return upload_response(request, AnnotationImportRequestSerializer, run)
