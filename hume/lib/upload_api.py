"""What every import endpoint of the API answers, in one error shape: a bad request or a bad file is a 400 whose
`errors` name the uploaded file, the line and the field (docs/import.md); a good one a 201 with the summary.

Dataset imports (tasks_app), annotation imports (annotation) and any later upload share it, so a client handles
one format. The import itself is handed in (`run`); it raises `ImportFailed` (hume/lib/import_reader.py).
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import PurePath
from typing import Any

from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from hume.lib.import_reader import ImportFailed


class ImportProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    line = serializers.IntegerField(allow_null=True)
    field = serializers.CharField(allow_null=True)
    message = serializers.CharField()


class ImportErrorsSerializer(serializers.Serializer):
    errors = ImportProblemSerializer(many=True)


def serializer_problems(errors: dict[str, Any], filename: str) -> list[dict[str, Any]]:
    """DRF field errors in the import's error shape, so clients handle one format."""
    return [{"file": filename, "line": None, "field": None if name == "non_field_errors" else name,
             "message": " ".join(str(m) for m in messages)} for name, messages in errors.items()]


def upload_response(request: Request, serializer_class: type[Serializer],
                    run: Callable[[dict[str, Any], str], Any]) -> Response:
    """What every import endpoint answers: 400 with each problem (naming the uploaded file, line and field)
    for a bad request or a bad file, else 201 with the summary of `run(validated data, file name)`."""
    serializer = serializer_class(data=request.data)
    upload = request.FILES.get("file")
    filename = PurePath(upload.name).name if upload else ""
    if not serializer.is_valid():
        return Response({"errors": serializer_problems(serializer.errors, filename)}, status=400)
    try:
        summary = run(dict(serializer.validated_data), filename)
    except ImportFailed as failed:
        return Response({"errors": [problem.as_dict() for problem in failed.problems]}, status=400)
    return Response(summary.as_dict(), status=201)
