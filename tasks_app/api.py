"""The task API: read tasks (scoped to the requesting user) and import datasets (admins)."""
from __future__ import annotations

from pathlib import PurePath

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.decorators import api_view, parser_classes, permission_classes
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.viewsets import ReadOnlyModelViewSet

from .access import may_import, visible_tasks, with_counts
from .importing import ImportFailed, import_upload
from .models import Task
from .serializers import (
    ImportErrorsSerializer,
    ImportSummarySerializer,
    TaskImportRequestSerializer,
    TaskSerializer,
    serializer_problems,
)


class IsProjectAdmin(BasePermission):
    """Admins (hume.roles) only, which implies authenticated; shared by every import endpoint."""

    message = "Only admins may import."

    def has_permission(self, request: Request, view: APIView) -> bool:
        return may_import(request.user)


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
    responses={201: ImportSummarySerializer, 400: ImportErrorsSerializer,
               403: OpenApiResponse(description="not an admin")},
)
@api_view(["POST"])
@parser_classes([MultiPartParser])
@permission_classes([IsProjectAdmin])
def import_dataset(request: Request) -> Response:
    serializer = TaskImportRequestSerializer(data=request.data)
    upload = request.FILES.get("file")
    filename = PurePath(upload.name).name if upload else ""
    if not serializer.is_valid():
        return Response({"errors": serializer_problems(serializer.errors, filename)}, status=400)
    options = dict(serializer.validated_data)
    try:
        summary = import_upload(options.pop("file"), options)
    except ImportFailed as failed:
        return Response({"errors": [p.as_dict() for p in failed.problems]}, status=400)
    return Response(summary.as_dict(), status=201)
