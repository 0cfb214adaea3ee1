"""The app's URLs plus the loop benchmark's yardstick: a bare Django view pair, one SELECT and one INSERT.

The issue measures the annotator loop against "a bare Django view pair doing one SELECT and one INSERT"
(about 800 cycles/s on its machine). These two plain function views are that pair, served by the same
gunicorn, settings, middleware and database as the loop, so the two figures are taken at the same moment
on the same stack and the loop's throughput can be read as a share of what the machine gives.
"""
from __future__ import annotations

import json

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.urls import path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from hume.urls import urlpatterns as app_urlpatterns

WRITES_TABLE = "bench_reference_write"  # created by the bench's seed step


@require_GET
def read_one(request: HttpRequest, user_id: int) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, username FROM auth_user WHERE id = %s", [user_id])
        row = cursor.fetchone()
    return JsonResponse({"id": row[0], "username": row[1]} if row else {}, status=200 if row else 404)


@csrf_exempt
@require_POST
def write_one(request: HttpRequest) -> JsonResponse:
    body = json.loads(request.body or b"{}")
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {WRITES_TABLE} (at, body) VALUES (now(), %s) RETURNING id", [json.dumps(body)])
        new_id = cursor.fetchone()[0]
    return JsonResponse({"id": new_id}, status=201)


urlpatterns = [
    *app_urlpatterns,
    path("bench/read/<int:user_id>/", read_one),
    path("bench/write/", write_one),
]
