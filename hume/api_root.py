"""GET /api/v1/: where the API's documentation and schema are, so the API's base URL answers instead of 404."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

Root = inline_serializer("ApiRoot", {"version": serializers.IntegerField(), "docs": serializers.URLField(),
                                     "schema": serializers.URLField(), "authentication": serializers.CharField()})


class ApiRoot(APIView):
    """The API's entry point: its version and links to the browsable documentation and the OpenAPI schema."""

    permission_classes = [AllowAny]  # links only; every data route checks its own permission

    @extend_schema(responses=Root, summary="Links to the API documentation and schema")
    def get(self, request: Request) -> Response:
        return Response({"version": 1, "docs": reverse("api-docs", request=request),
                         "schema": reverse("schema", request=request),
                         "authentication": "a logged-in session, or the header Authorization: Token <key> (an admin "
                                           "makes one with python manage.py drf_create_token USER)"})
