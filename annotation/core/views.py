"""The annotator's loop in the browser: their batches, the item on screen, submit, skip, flag, back.

Every page is a plain form post that works without JavaScript; htmx requests get the `_item.html` fragment
and swap the next item in place. The assignment engine decides what an annotator may see and store; these
views only render, validate with the kind's form, and pass the answer on. Nothing here reads gold.
"""
from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core import signing
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST

from annotation.core.access import annotator_of, get_batch_item_for, get_batch_to_annotate, get_item_to_write
from annotation.core.assignment import (
    AssignmentRefused,
    annotator_progress,
    flag_item,
    next_item,
    previous_annotation,
    skip_item,
    submit_answer,
)
from annotation.core.batches import default_batch_name
from annotation.core.forms import AnswerForm, FlagForm, SkipForm, answer_form_for
from annotation.core.models import Annotation, Annotator, Batch
from hume.lib.htmx import vary_on_htmx, wants_partial
from tasks_app import instructions
from tasks_app.core.kinds import ValidationProblem
from tasks_app.models import Item, Task

SHOWN_SALT = "annotation.item-shown"
SHOWN_MAX_AGE = 24 * 3600
# Annotator pages run no inline script and load nothing from elsewhere; a payload that slipped past
# escaping still could not execute.
CONTENT_SECURITY_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                           "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def instructions_html(task: Task) -> SafeString:
    """Admin-written Markdown, rendered as on every other page (tasks_app/instructions.py, cached there)."""
    return instructions.to_html(task.instructions)


def batch_rows(annotator: Annotator) -> list[dict[str, Any]]:
    """The annotator's open batches with their progress, for the home page and /annotate/."""
    rows = []
    for batch in annotator.batches.filter(is_open=True).select_related("task").order_by("due_date", "name"):
        progress = annotator_progress(annotator, batch)
        finished = progress["done"] + progress["skipped"]
        # a batch named by default ("<task> · <language>") is shown by its task's name alone, not twice
        named = batch.name != default_batch_name(batch.task, batch.language)
        rows.append({"batch": batch, "progress": progress, "finished": finished, "named": named,
                     "complete": finished >= progress["total"]})
    return rows


def shown_token(batch: Batch, item: Item) -> str:
    return signing.dumps([batch.pk, item.pk, int(time.time() * 1000)], salt=SHOWN_SALT)


def shown_time(token: str | None, batch: Batch, item: Item) -> tuple[datetime | None, int | None]:
    """When this item was put on screen (signed by us, so a client cannot inflate it) and the time since."""
    try:
        batch_id, item_id, shown_ms = signing.loads(token or "", salt=SHOWN_SALT, max_age=SHOWN_MAX_AGE)
    except (signing.BadSignature, ValueError, TypeError):
        return None, None
    if (batch_id, item_id) != (batch.pk, item.pk):
        return None, None
    now_ms = int(time.time() * 1000)
    return datetime.fromtimestamp(shown_ms / 1000, tz=UTC), max(0, now_ms - shown_ms)


def _own_annotation(annotator: Annotator, item: Item) -> Annotation | None:
    return Annotation.objects.filter(annotator=annotator, item=item).first()


def _item_context(request: HttpRequest, annotator: Annotator, batch: Batch, item: Item, *,
                  form: AnswerForm | None = None, flag_form: FlagForm | None = None,
                  skip_form: SkipForm | None = None) -> dict[str, Any]:
    task = batch.task
    annotation = _own_annotation(annotator, item)
    answered = annotation is not None and not annotation.skipped
    if form is None:
        form = answer_form_for(task, item.payload, answer=annotation.value if answered else None)
    previous = previous_annotation(annotator, batch, before=item if annotation else None)
    progress = annotator_progress(annotator, batch)
    finished = progress["done"] + progress["skipped"]
    return {
        "batch": batch, "task": task, "item": item, "form": form, "annotation": annotation, "answered": answered,
        "flag_form": flag_form or FlagForm(), "skip_form": skip_form or SkipForm(),
        "progress": progress, "finished": finished, "previous": previous,
        "instructions": instructions_html(task), "open_instructions": finished == 0 and annotation is None,
        "shown": shown_token(batch, item), "draft_key": f"{request.user.pk}:{batch.pk}:{item.pk}",
    }


def _page(request: HttpRequest, fragment: str, context: dict[str, Any], *, status: int = 200,
          push_url: str | None = None) -> HttpResponse:
    """htmx gets the fragment that replaces #loop; a plain request (or history restore) gets the whole page."""
    partial = wants_partial(request)
    context = {**context, "fragment": fragment}
    response = render(request, fragment if partial else "annotation/annotate.html", context, status=status)
    response["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    if partial and push_url:
        response["HX-Push-Url"] = push_url
    return response


def _refused(request: HttpRequest, batch: Batch, exc: AssignmentRefused) -> HttpResponse:
    context = {"batch": batch, "task": batch.task, "message": str(exc), "code": getattr(exc, "code", "")}
    return _page(request, "annotation/_refused.html", context, status=409)


def _next(request: HttpRequest, annotator: Annotator, batch: Batch) -> HttpResponse:
    """Render the annotator's next item (the same one again while their lease lives), or the done page."""
    batch_url = reverse("annotation:batch", args=[batch.pk])
    try:
        item = next_item(annotator, batch)
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    if item is None:
        progress = annotator_progress(annotator, batch)
        previous = previous_annotation(annotator, batch)
        context = {"batch": batch, "task": batch.task, "progress": progress, "previous": previous,
                   "finished": progress["done"] + progress["skipped"]}
        return _page(request, "annotation/_done.html", context, push_url=batch_url)
    return _page(request, "annotation/_item.html", _item_context(request, annotator, batch, item),
                 push_url=batch_url)


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    annotator = annotator_of(request.user)
    if annotator is None:
        raise PermissionDenied("Only annotators have batches to annotate.")
    return render(request, "annotation/home.html", {"rows": batch_rows(annotator), "annotator": annotator})


@login_required
@require_GET
@vary_on_htmx
def batch_page(request: HttpRequest, batch_id: int) -> HttpResponse:
    annotator, batch = get_batch_to_annotate(request.user, batch_id)
    return _next(request, annotator, batch)


@login_required
@require_GET
@vary_on_htmx
def item_page(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    """An item the annotator answered (to revise) or holds now; one no longer held sends them to their next."""
    annotator, batch = get_batch_to_annotate(request.user, batch_id)
    try:
        item = get_batch_item_for(request.user, batch, item_id)
    except Http404:
        get_item_to_write(request.user, batch_id, item_id)  # 404 unless the item is in the batch
        return redirect("annotation:batch", batch.pk)
    url = reverse("annotation:item", args=[batch.pk, item.pk])
    return _page(request, "annotation/_item.html", _item_context(request, annotator, batch, item), push_url=url)


@login_required
@require_GET
@vary_on_htmx
def back(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    """The answer given just before this item, opened for revision (the current item stays leased)."""
    annotator, batch = get_batch_to_annotate(request.user, batch_id)
    item = get_batch_item_for(request.user, batch, item_id)
    before = item if _own_annotation(annotator, item) else None
    previous = previous_annotation(annotator, batch, before=before)
    if previous is None:
        return redirect("annotation:item", batch.pk, item.pk)
    if not wants_partial(request):
        return redirect("annotation:item", batch.pk, previous.item_id)
    url = reverse("annotation:item", args=[batch.pk, previous.item_id])
    return _page(request, "annotation/_item.html", _item_context(request, annotator, batch, previous.item),
                 push_url=url)


def _after_write(request: HttpRequest, annotator: Annotator, batch: Batch) -> HttpResponse:
    if wants_partial(request):
        return _next(request, annotator, batch)
    return redirect("annotation:batch", batch.pk)


def _invalid(request: HttpRequest, annotator: Annotator, batch: Batch, item: Item, **forms: Any) -> HttpResponse:
    context = _item_context(request, annotator, batch, item, **forms)
    return _page(request, "annotation/_item.html", context, status=422)


@login_required
@require_POST
def answer(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    form = answer_form_for(batch.task, item.payload, request.POST)
    flag_form = FlagForm(request.POST)
    if not (form.is_valid() and flag_form.is_valid()):
        return _invalid(request, annotator, batch, item, form=form, flag_form=flag_form)
    started_at, spent_ms = shown_time(request.POST.get("shown"), batch, item)
    try:
        submit_answer(annotator, batch, item, form.cleaned_data["value"], time_spent_ms=spent_ms,
                      started_at=started_at, flagged=bool(flag_form.comment), flag_comment=flag_form.comment,
                      source="browser")
    except ValidationProblem as problem:
        form.add_error(None, str(problem))
        return _invalid(request, annotator, batch, item, form=form, flag_form=flag_form)
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    return _after_write(request, annotator, batch)


@login_required
@require_POST
def skip(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    skip_form = SkipForm(request.POST)
    if not skip_form.is_valid():
        return _invalid(request, annotator, batch, item, skip_form=skip_form)
    _, spent_ms = shown_time(request.POST.get("shown"), batch, item)
    try:
        skip_item(annotator, batch, item, reason=skip_form.reason, time_spent_ms=spent_ms, source="browser")
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    return _after_write(request, annotator, batch)


@login_required
@require_POST
def flag(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    """Flag without answering: the engine flags an existing answer, or records a flagged skip."""
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    flag_form = FlagForm(request.POST, required=True)
    if not flag_form.is_valid():
        return _invalid(request, annotator, batch, item, flag_form=flag_form)
    try:
        flag_item(annotator, batch, item, comment=flag_form.comment, source="browser")
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    return _after_write(request, annotator, batch)
