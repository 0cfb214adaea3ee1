"""JSON API for model results: ``POST /api/v1/results/import/`` (admins) and the leaderboard (researchers).

The import endpoint takes the same inputs as the upload page (multipart ``file``; ``model_name`` and
``revision`` for a single .json) and answers 201 with what was imported, 400 with every problem found
(nothing imported), or 413 for an upload over the size limit, refused before its body is read.
"""
from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.urls import path
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agreement.results.compare import build, export_rows, leaderboard_rows
from agreement.results.project import queue_missing_reports
from agreement.results.results_import import UploadLimit, import_upload, upload_too_large
from hume.roles import IsAdmin, IsResearcher
from measures.results.mteb_files import ResultsImportError, ResultsImportErrors
from measures.results.subset_scores import HUME_LANGUAGES


class ImportRequest(serializers.Serializer):
    file = serializers.FileField(help_text=".zip / .tar.gz of <org__model>/<revision>/<Task>.json, or one .json")
    model_name = serializers.CharField(required=False, help_text="For a single .json: org/model")
    revision = serializers.CharField(required=False, help_text="For a single .json")


class ResultsImportSummary(serializers.Serializer):
    source = serializers.CharField()
    models = serializers.ListField(child=serializers.CharField())
    revisions_created = serializers.IntegerField()
    scores_created = serializers.IntegerField()
    scores_updated = serializers.IntegerField()
    scores_unchanged = serializers.IntegerField()
    message = serializers.CharField()


class ImportProblems(serializers.Serializer):
    detail = serializers.CharField()
    errors = serializers.ListField(child=serializers.CharField(), help_text="Each: file, key and problem")


class LeaderboardRows(serializers.Serializer):
    languages = serializers.ListField(child=serializers.CharField())
    rows = serializers.ListField(child=serializers.DictField(), help_text="HUME Table 1 rows, scores 0-1")


class ImportResults(APIView):
    """Import an archive (.zip / .tar.gz of <org__model>/<revision>/<Task>.json) or one TaskResult .json."""

    permission_classes = [IsAuthenticated & IsAdmin]
    parser_classes = [MultiPartParser]
    checks_own_upload_size = True  # RESULTS_MAX_UPLOAD_BYTES, answered below (hume/upload_limit.py)

    def initialize_request(self, request: HttpRequest, *args: Any, **kwargs: Any) -> Request:
        request.upload_handlers.insert(0, UploadLimit(request))
        return super().initialize_request(request, *args, **kwargs)

    @extend_schema(request={"multipart/form-data": ImportRequest},
                   responses={201: ResultsImportSummary, 400: ImportProblems, 413: ImportProblems})
    def post(self, request: Request) -> Response:
        too_large = upload_too_large(request._request)
        if too_large:
            return Response({"detail": too_large, "errors": [too_large]},
                            status=status.HTTP_413_REQUEST_ENTITY_TOO_LARGE)
        upload = request.FILES.get("file")
        if upload is None:
            return Response({"detail": "send the results as the multipart field 'file'", "errors": []},
                            status=status.HTTP_400_BAD_REQUEST)
        try:
            summary = import_upload(upload.name or "upload", upload, upload.size or 0,
                                    model_name=(request.data.get("model_name") or "").strip() or None,
                                    revision=(request.data.get("revision") or "").strip() or None)
        except ResultsImportError as exc:
            errors = [str(e) for e in exc.errors] if isinstance(exc, ResultsImportErrors) else [str(exc)]
            return Response({"detail": f"nothing imported: {errors[0]}", "errors": errors},
                            status=status.HTTP_400_BAD_REQUEST)
        return Response(summary.as_dict(), status=status.HTTP_201_CREATED)


class Leaderboard(APIView):
    """HUME Table 1 rows (scores 0–1); ``?lang=`` repeated picks the languages (default HUME's five);
    ranked over the subsets the rows share, or with ``?subsets=all`` only rows with every subset.

    Project humans come from stored reports only; a mapped task without one gets its first report queued
    for a worker (as the pages do) and joins the rows once it is stored."""

    permission_classes = [IsAuthenticated & IsResearcher]

    @extend_schema(responses={200: LeaderboardRows})
    def get(self, request: Request) -> Response:
        languages = request.query_params.getlist("lang") or list(HUME_LANGUAGES)
        comparison = build()
        queue_missing_reports(comparison)  # a broker error is recorded on the report row
        rank_over = "all" if request.query_params.get("subsets") == "all" else "shared"
        rows = leaderboard_rows(comparison, languages, rank_over=rank_over)
        return Response({"languages": languages, "rows": export_rows(rows)})


urlpatterns = [
    path("results/import/", ImportResults.as_view(), name="results-import"),
    path("results/leaderboard/", Leaderboard.as_view(), name="results-leaderboard"),
]
