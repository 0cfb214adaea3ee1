"""The task API: read tasks (scoped to the requesting user) and import datasets (admins)."""
from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django.db.models import QuerySet
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.viewsets import ReadOnlyModelViewSet

from hume.lib.import_reader import ImportFailed
from hume.lib.upload_api import ImportErrorsSerializer, serializer_problems, upload_response
from hume.roles import IsAdmin

from .import_jobs import goes_to_background, start_import_job
from .importing import import_upload
from .models import ImportJob, Task
from .serializers import ImportJobSerializer, ImportSummarySerializer, TaskImportRequestSerializer, TaskSerializer
from .task_access import visible_tasks, with_counts


@extend_schema_view(
    list=extend_schema(summary="List tasks", description="Researchers and admins see every task; annotators only "
                       "the tasks they have a batch in. Never includes gold."),
    retrieve=extend_schema(summary="One task", description="Same visibility as the list; 404 otherwise."),
)
class TaskViewSet(ReadOnlyModelViewSet):
    serializer_class = TaskSerializer

    def get_queryset(self) -> QuerySet[Task]:
        return with_counts(visible_tasks(self.request.user)).order_by("name")


@extend_schema(
    summary="Import a dataset",
    description="The same import as `manage.py import_task` and the upload page: atomic (a bad file imports "
                "nothing) and idempotent (the same file again adds nothing). Errors name file, line and field.",
    request={"multipart/form-data": TaskImportRequestSerializer},
    responses={201: ImportSummarySerializer, 202: ImportJobSerializer, 400: ImportErrorsSerializer,
               403: OpenApiResponse(description="not an admin")},
)
@api_view(["POST"])
@parser_classes([MultiPartParser])
@permission_classes([IsAdmin])
def import_dataset(request: Request) -> Response:
    """201 with the summary; for a file over IMPORT_IN_BACKGROUND_BYTES, 202 with the job a worker runs and
    its status URL (also in Location), whose `status` ends "done" (with the summary) or "failed" (with the
    problems, as a 400 would list them)."""
    upload = request.FILES.get("file")
    if upload is not None and goes_to_background(upload):
        return background_import(request, upload)

    def run(options: dict[str, Any], filename: str) -> Any:
        return import_upload(options.pop("file"), options)

    return upload_response(request, TaskImportRequestSerializer, run)


def background_import(request: Request, upload: Any) -> Response:
    serializer = TaskImportRequestSerializer(data=request.data)
    filename = PurePath(upload.name).name
    if not serializer.is_valid():
        return Response({"errors": serializer_problems(serializer.errors, filename)}, status=400)
    try:
        job = start_import_job(upload, dict(serializer.validated_data), request.user)
    except ImportFailed as failed:
        return Response({"errors": [problem.as_dict() for problem in failed.problems]}, status=400)
    body = ImportJobSerializer(job, context={"request": request}).data
    return Response(body, status=202, headers={"Location": body["status_url"]})


@extend_schema(summary="A background dataset import", responses={200: ImportJobSerializer})
@api_view(["GET"])
@permission_classes([IsAdmin])
def import_status(request: Request, job_id: int) -> Response:
    job = get_object_or_404(ImportJob, pk=job_id)
    return Response(ImportJobSerializer(job, context={"request": request}).data)
