"""Who may read and change the model comparison: the guards every results page uses.

Researchers and admins read (annotators never see model scores or gold-derived numbers); only admins import,
pick a current revision or edit a task's MTEB mapping. Roles come from hume.roles.
"""
from __future__ import annotations

from django.http import HttpRequest
from django.shortcuts import get_object_or_404

from agreement.results.models import ResultRevision
from hume.roles import ADMIN, RESEARCHER, require_role, role_required
from tasks_app.models import Task

# Logged in and a researcher or admin (annotators never see model scores or gold-derived numbers).
researcher_required = role_required(RESEARCHER, "Model comparisons are for researchers and admins.")


def require_admin(request: HttpRequest) -> None:
    require_role(request.user, ADMIN, "Only admins may change imported results or mappings.")


def get_revision_for_admin(request: HttpRequest, pk: int) -> ResultRevision:
    """The access helper for revisions: admins only, and never a single annotator's folder."""
    require_admin(request)
    return get_object_or_404(ResultRevision.objects.select_related("model"), pk=pk, annotator_id="")


def get_task_for_admin(request: HttpRequest, pk: int) -> Task:
    require_admin(request)
    return get_object_or_404(Task, pk=pk)
