"""The project's start page (/): each role lands on its own start; an annotator sees their open batches.

It lives in annotation (which knows annotators and batches) so that the settings package imports no app;
hume/urls.py includes this module by name.
"""
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path

from annotation.core.views import batch_rows
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


urlpatterns = [path("", home, name="home")]
