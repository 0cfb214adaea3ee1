"""Who may read and change the model comparison: the guards every results page uses.

Researchers and admins read (annotators never see model scores or gold-derived numbers); only admins import,
pick a current revision or edit a task's MTEB mapping. Roles come from hume.roles.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404

from agreement.results.models import ResultRevision
from hume.roles import is_admin, is_researcher
from tasks_app.models import Task


def researcher_required(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Logged in and a researcher or admin (annotators never see model scores or gold-derived numbers)."""
    @login_required
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not is_researcher(request.user):
            raise PermissionDenied("Model comparisons are for researchers and admins.")
        return view(request, *args, **kwargs)

    return wrapped


def require_admin(request: HttpRequest) -> None:
    if not is_admin(request.user):
        raise PermissionDenied("Only admins may change imported results or mappings.")


def get_revision_for_admin(request: HttpRequest, pk: int) -> ResultRevision:
    """The access helper for revisions: admins only, and never a single annotator's folder."""
    require_admin(request)
    return get_object_or_404(ResultRevision.objects.select_related("model"), pk=pk, annotator_id="")


def get_task_for_admin(request: HttpRequest, pk: int) -> Task:
    require_admin(request)
    return get_object_or_404(Task, pk=pk)
