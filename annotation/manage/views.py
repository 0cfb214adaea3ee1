"""Admin pages: annotator profiles, batches, assignments and the live progress dashboard.

Every object is reached through annotation.core.access first (someone else's id answers 404), then the role is
checked (a researcher may read, only an admin may change: 403). htmx requests get the `_partial` fragment
of the same template family; every response that differs by it says `Vary: HX-Request`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models.functions import Lower
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.core import access, assignment, batches, progress
from annotation.core.annotators import create_annotator
from annotation.core.models import AnnotationRevision, Annotator, BatchAssignee
from annotation.manage.forms import (
    AnnotatorCreateForm,
    AnnotatorEditForm,
    AssignForm,
    BatchEditForm,
    BatchForm,
    BulkBatchForm,
    LanguageFormSet,
    language_codes,
)
from hume.lib.htmx import page_or_partial, vary_on_htmx, wants_partial
from hume.listing import search_and_sort
from hume.roles import ADMIN, RESEARCHER, is_admin, require_role, role_required

View = Callable[..., HttpResponse]
ANNOTATOR_SORTS = {"name": (Lower("user__username"),), "agent": ("agent", Lower("user__username")),
                   "state": ("-active", Lower("user__username"))}
BATCH_SORTS = {"name": (Lower("name"),), "task": (Lower("task__name"), Lower("name")),
               "language": ("language", Lower("name")), "k": ("overlap", Lower("name")),
               "state": ("-is_open", Lower("name")), "due": ("due_date", Lower("name")), "created": ("created_at",)}


# Pages for admins and researchers; annotators have their own pages in the annotator loop.
readers_only = role_required(RESEARCHER, "Only admins and researchers can open the management pages.")
admins_only = role_required(ADMIN, "Only admins can do this.")


# --- annotators ---------------------------------------------------------------------------------------------------

@readers_only
@require_GET
@vary_on_htmx
def annotator_list(request: HttpRequest) -> HttpResponse:
    annotators, listing = search_and_sort(request, access.visible_annotators(request.user),
                                          search=("user__username", "agent", "languages__language"),
                                          sorts=ANNOTATOR_SORTS, default="name")
    context = {"annotators": annotators, "listing": listing, "can_manage": is_admin(request.user)}
    return page_or_partial(request, "annotation/manage/annotators.html", "annotation/manage/_annotators_partial.html",
                        context)


@admins_only
@require_http_methods(["GET", "POST"])
def annotator_create(request: HttpRequest) -> HttpResponse:
    form = AnnotatorCreateForm(request.POST or None)
    languages = LanguageFormSet(request.POST or None, instance=Annotator())
    if request.method == "POST" and form.is_valid() and languages.is_valid():
        with transaction.atomic():
            data = form.cleaned_data
            annotator = create_annotator(data["username"], agent=data["agent"], password=data.get("password"))
            languages.instance = annotator
            languages.save()
        messages.success(request, f"Annotator {annotator.name} created.")
        return redirect("manage:annotator_detail", annotator_id=annotator.pk)
    return render(request, "annotation/manage/annotator_form.html",
                  {"form": form, "languages": languages, "language_codes": language_codes()})


@login_required
@require_http_methods(["GET", "POST"])
def annotator_detail(request: HttpRequest, annotator_id: int) -> HttpResponse:
    """Readers see any profile, an annotator their own; admins edit agent and languages here."""
    annotator = access.get_annotator_for(request.user, annotator_id)
    editing = request.method == "POST"
    if editing:
        require_role(request.user, ADMIN, "Only admins change annotator profiles.")
    form = AnnotatorEditForm(request.POST or None, initial={"agent": annotator.agent})
    languages = LanguageFormSet(request.POST or None, instance=annotator)
    if editing and form.is_valid() and languages.is_valid():
        with transaction.atomic():
            annotator.agent = form.cleaned_data["agent"]
            annotator.save(update_fields=["agent"])
            languages.save()
        messages.success(request, f"{annotator.name} updated.")
        return redirect("manage:annotator_detail", annotator_id=annotator.pk)
    assignments = access.visible_assignments(request.user).filter(annotator=annotator).order_by("-batch__created_at")
    context = {"annotator": annotator, "form": form, "languages": languages, "assignments": assignments,
               "can_manage": is_admin(request.user), "language_codes": language_codes()}
    return render(request, "annotation/manage/annotator_detail.html", context)


@login_required
@require_POST
def annotator_set_active(request: HttpRequest, annotator_id: int) -> HttpResponse:
    """Deactivating returns the annotator's held items to the pool at once; their answers stay."""
    annotator = access.get_annotator_to_manage(request.user, annotator_id)
    active = request.POST.get("active") == "1"
    released = assignment.set_active(annotator, active)
    state = "reactivated" if active else f"deactivated; {released} held item(s) went back to the pool"
    messages.success(request, f"{annotator.name} {state}.")
    if wants_partial(request):
        row = access.visible_annotators(request.user).get(pk=annotator.pk)
        return render(request, "annotation/manage/_annotator_row.html", {"a": row, "can_manage": True})
    return redirect(request.POST.get("next") or reverse("manage:annotator_list"))


# --- batches --------------------------------------------------------------------------------------------------------

@readers_only
@require_GET
@vary_on_htmx
def batch_list(request: HttpRequest) -> HttpResponse:
    shown = access.visible_batches(request.user)
    if request.GET.get("state") in ("open", "closed"):
        shown = shown.filter(is_open=request.GET["state"] == "open")
    shown, listing = search_and_sort(request, shown, search=("name", "task__name", "language"), sorts=BATCH_SORTS,
                                     default="-created", keep=("state",))
    context = {"lines": progress.overview(shown), "can_manage": is_admin(request.user),
               "state": request.GET.get("state", ""), "listing": listing,
               "poll_query": request.GET.urlencode()}
    return page_or_partial(request, "annotation/manage/batches.html", "annotation/manage/_batches_partial.html",
                           context)


@admins_only
@require_http_methods(["GET", "POST"])
def batch_create(request: HttpRequest) -> HttpResponse:
    form = BatchForm(request.POST or None, initial={"task": request.GET.get("task")})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        spec = batches.BatchSpec(task=data["task"], language=data["language"] or None, overlap=data["overlap"],
                                 name=data["name"] or None, hold_seconds=data["hold_minutes"] * 60,
                                 due_date=data["due_date"])
        try:
            batch, created = batches.create_batch(spec, annotators=data["annotators"],
                                                  override_reason=data["override_reason"], created_by=request.user)
        except batches.AssignmentProblem as problem:
            form.add_error(problem.field, problem.message)
        else:
            note = "created" if created else "already existed; new assignees were added"
            messages.success(request, f"Batch “{batch.name}” {note}.")
            return redirect("manage:batch_detail", batch_id=batch.pk)
    return render(request, "annotation/manage/batch_form.html", {"form": form, "language_codes": language_codes()})


@admins_only
@require_http_methods(["GET", "POST"])
def batch_bulk_create(request: HttpRequest) -> HttpResponse:
    """One batch per language of a multilingual task, in one step."""
    form = BulkBatchForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        made = batches.create_language_batches(
            form.selected_tasks(), overlap=data["overlap"], assign_speakers=data["assign_speakers"],
            hold_seconds=data["hold_minutes"] * 60, due_date=data["due_date"], created_by=request.user)
        fresh = sum(created for _, created in made)
        messages.success(request, f"{fresh} batch(es) created, {len(made) - fresh} already existed.")
        return redirect("manage:batch_list")
    return render(request, "annotation/manage/batch_bulk.html", {"form": form})


@login_required
@require_GET
@vary_on_htmx
def batch_detail(request: HttpRequest, batch_id: int) -> HttpResponse:
    """Settings, assignees and the live dashboard; htmx polls return only the dashboard partial."""
    batch = access.get_batch_for(request.user, batch_id)
    require_role(request.user, RESEARCHER, "Annotators follow their progress in their own batch pages.")
    context = {"batch": batch, "progress": progress.batch_progress(batch), "can_manage": is_admin(request.user),
               "now": timezone.now()}
    if not wants_partial(request):
        context.update(edit_form=BatchEditForm(initial=edit_initial(batch)), assign_form=AssignForm(),
                       assignees=BatchAssignee.objects.filter(batch=batch).select_related("annotator__user"))
    return page_or_partial(request, "annotation/manage/batch_detail.html", "annotation/manage/_progress_partial.html",
                        context)


def edit_initial(batch: Any) -> dict[str, Any]:
    return {"name": batch.name, "overlap": batch.overlap, "hold_minutes": max(1, batch.hold_seconds // 60),
            "due_date": batch.due_date}


@login_required
@require_POST
def batch_edit(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = access.get_batch_to_manage(request.user, batch_id)
    form = BatchEditForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Batch not changed: " + "; ".join(
            f"{name}: {' '.join(errors)}" for name, errors in form.errors.items()))
        return redirect("manage:batch_detail", batch_id=batch.pk)
    data = form.cleaned_data
    batch.name, batch.overlap, batch.due_date = data["name"], data["overlap"], data["due_date"]
    batch.hold_seconds = data["hold_minutes"] * 60
    batch.save(update_fields=["name", "overlap", "due_date", "hold_seconds"])
    messages.success(request, "Batch settings saved.")
    return redirect("manage:batch_detail", batch_id=batch.pk)


@login_required
@require_POST
def batch_set_open(request: HttpRequest, batch_id: int) -> HttpResponse:
    """Closing a batch stops new items and refuses submits and revisions; reopening allows them again."""
    batch = access.get_batch_to_manage(request.user, batch_id)
    batch.is_open = request.POST.get("open") == "1"
    batch.save(update_fields=["is_open"])
    messages.success(request, f"Batch “{batch.name}” {'reopened' if batch.is_open else 'closed'}.")
    return redirect("manage:batch_detail", batch_id=batch.pk)


@login_required
@require_POST
def batch_assign(request: HttpRequest, batch_id: int) -> HttpResponse:
    batch = access.get_batch_to_manage(request.user, batch_id)
    form = AssignForm(request.POST)
    if form.is_valid():
        try:
            batches.assign(batch, form.cleaned_data["annotators"], override_reason=form.cleaned_data["override_reason"],
                           assigned_by=request.user)
        except batches.AssignmentProblem as problem:
            messages.error(request, problem.message)
        else:
            messages.success(request, "Assignees added.")
    else:
        messages.error(request, "Choose at least one annotator.")
    return redirect("manage:batch_detail", batch_id=batch.pk)


@login_required
@require_GET
def batch_export(request: HttpRequest, batch_id: int, part: str) -> HttpResponse:
    """CSV of the dashboard: one row per annotator ("progress") or every skip and flag ("issues")."""
    batch = access.get_batch_for(request.user, batch_id)
    if part not in ("progress", "issues"):
        raise Http404("Exports are progress.csv and issues.csv.")
    require_role(request.user, RESEARCHER, "Only admins and researchers export progress.")
    figures = progress.batch_progress(batch, issues=None if part == "issues" else 0)
    body = progress.issues_csv(figures) if part == "issues" else progress.progress_csv(figures)
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="batch-{batch.pk}-{part}.csv"'
    return response


# --- assignments and annotations --------------------------------------------------------------------------------------

@login_required
@require_GET
def assignment_detail(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """One annotator on one batch: the annotator sees their own, readers any; everyone else 404."""
    seat = access.get_assignment_for(request.user, assignment_id)
    figures = assignment.annotator_progress(seat.annotator, seat.batch)
    context = {"seat": seat, "figures": figures, "can_manage": is_admin(request.user)}
    return render(request, "annotation/manage/assignment_detail.html", context)


@login_required
@require_POST
def assignment_remove(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Take an annotator off a batch: their held items go back to the pool, their answers stay."""
    seat = access.get_assignment_to_manage(request.user, assignment_id)
    batches.unassign(seat.batch, seat.annotator)
    messages.success(request, f"{seat.annotator.name} removed from “{seat.batch.name}”.")
    return redirect("manage:batch_detail", batch_id=seat.batch_id)


@login_required
@require_GET
def annotation_detail(request: HttpRequest, annotation_id: int) -> HttpResponse:
    """One answer with its revision history: its annotator and readers only. Never shows gold."""
    answer = access.get_annotation_for(request.user, annotation_id)
    revisions = AnnotationRevision.objects.filter(annotation=answer).order_by("replaced_at")
    return render(request, "annotation/manage/annotation_detail.html", {"answer": answer, "revisions": revisions})


@login_required
@require_GET
def manage_home(request: HttpRequest) -> HttpResponse:
    return redirect("manage:batch_list")
