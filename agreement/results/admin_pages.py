"""What admins change in the model comparison: the MTEB results import, a model's current revision, and
which project task is which MTEB task; and the list of imported models and revisions researchers read.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt, csrf_protect
from django.views.decorators.http import require_POST

from agreement.results.models import ResultModel, ResultRevision, ResultScore
from agreement.results.page_access import get_revision_for_admin, get_task_for_admin, require_admin, researcher_required
from agreement.results.results_import import (
    MAX_UPLOAD_BYTES,
    UploadLimit,
    import_upload,
    set_current,
    unpin_current,
    upload_too_large,
)
from agreement.results.selection import TEMPLATES
from hume.roles import is_admin
from measures.results.mteb_files import ResultsImportError, ResultsImportErrors
from tasks_app.models import Task


@csrf_exempt  # the size is checked before the body is read; CSRF is then checked by _import_post
@login_required
def import_page(request: HttpRequest) -> HttpResponse:
    require_admin(request)
    if request.method != "POST":
        return render(request, f"{TEMPLATES}/import.html", _import_context())  # only admins get here
    request.upload_handlers.insert(0, UploadLimit(request))
    too_large = upload_too_large(request)
    if too_large:
        context = _import_context(errors=[too_large])
        return render(request, f"{TEMPLATES}/import.html", context, status=413)
    return _import_post(request)


import_page.checks_own_upload_size = True  # RESULTS_MAX_UPLOAD_BYTES (hume/upload_limit.py)


@csrf_protect
def _import_post(request: HttpRequest) -> HttpResponse:
    upload = request.FILES.get("file")
    if upload is None:
        return render(request, f"{TEMPLATES}/import.html", _import_context(errors=["Choose a file to upload."]),
                      status=400)
    try:
        summary = import_upload(upload.name or "upload", upload, upload.size or 0,
                                model_name=request.POST.get("model_name", "").strip() or None,
                                revision=request.POST.get("revision", "").strip() or None)
    except ResultsImportError as exc:
        errors = [str(error) for error in exc.errors] if isinstance(exc, ResultsImportErrors) else [str(exc)]
        return render(request, f"{TEMPLATES}/import.html", _import_context(errors=errors, failed=upload.name),
                      status=400)
    messages.success(request, f"Imported {summary.message}")
    return redirect("results:models")


def _import_context(errors: Sequence[str] = (), failed: str | None = None) -> dict[str, Any]:
    return {"errors": list(errors), "failed": failed, "max_mb": MAX_UPLOAD_BYTES // (1024 * 1024), "is_admin": True,
            "n_models": ResultModel.objects.count(), "n_scores": ResultScore.objects.count()}


@researcher_required
def models(request: HttpRequest) -> HttpResponse:
    revisions = ResultRevision.objects.select_related("model").order_by("model__name", "annotator_id", "revision")
    grouped: dict[int, dict[str, Any]] = {}
    for revision in revisions:
        entry = grouped.setdefault(revision.model_id, {"model": revision.model, "revisions": [], "annotators": []})
        entry["annotators" if revision.annotator_id else "revisions"].append(revision)
    return render(request, f"{TEMPLATES}/models.html",
                  {"models": list(grouped.values()), "is_admin": is_admin(request.user)})


@login_required
@require_POST
def make_current(request: HttpRequest, pk: int) -> HttpResponse:
    revision = get_revision_for_admin(request, pk)
    set_current(revision)
    messages.success(request, f"{revision.model.name}: revision {revision.revision} is now current (pinned).")
    return redirect("results:models")


@login_required
@require_POST
def unpin(request: HttpRequest, pk: int) -> HttpResponse:
    require_admin(request)
    model = get_object_or_404(ResultModel, pk=pk)
    revision = unpin_current(model)
    messages.success(request, f"{model.name}: the rule picks the current revision again "
                              f"({revision.revision if revision else 'none'}).")
    return redirect("results:models")


@researcher_required
def mapping(request: HttpRequest) -> HttpResponse:
    """Which project task is which MTEB task and subset; admins edit it here (or in the Django admin)."""
    imported = ResultScore.objects.filter(revision__annotator_id="").order_by()
    context = {"tasks": Task.objects.order_by("name"), "is_admin": is_admin(request.user),
               "mteb_tasks": sorted(set(imported.values_list("mteb_task_name", flat=True))),
               "mteb_subsets": sorted(set(imported.values_list("hf_subset", flat=True)))}
    return render(request, f"{TEMPLATES}/mapping.html", context)


@login_required
@require_POST
def edit_mapping(request: HttpRequest, pk: int) -> HttpResponse:
    task = get_task_for_admin(request, pk)
    name = request.POST.get("mteb_task_name", "").strip()
    subset = request.POST.get("mteb_subset", "").strip()
    if len(name) > 200 or len(subset) > 100:
        messages.error(request, f"{task.name}: the MTEB task name (200) or subset (100 characters) is too long.")
        return redirect("results:mapping")
    task.mteb_task_name, task.mteb_subset = name, subset
    task.save(update_fields=["mteb_task_name", "mteb_subset", "updated_at"])
    shown = f"{name} / {subset or 'any subset'}" if name else "no MTEB task"
    messages.success(request, f"{task.name} now maps to {shown}.")
    return redirect("results:mapping")
