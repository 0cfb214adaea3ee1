"""Project-level pages: the role-aware home and a health check."""
from django.contrib.auth.decorators import login_required
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from annotation.views import batch_rows
from hume.roles import is_admin, is_researcher


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Each role lands on its own start page; the sections below link to what the apps provide."""
    annotator = getattr(request.user, "annotator", None)
    context = {
        "is_admin": is_admin(request.user),
        "is_researcher": is_researcher(request.user),
        "annotator": annotator,
        "rows": batch_rows(annotator) if annotator else [],
    }
    return render(request, "home.html", context)


def healthz(request: HttpRequest) -> JsonResponse:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok", "database": connection.vendor})
