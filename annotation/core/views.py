"""The annotator's loop in the browser: their batches, the item on screen, submit, skip, flag, back.

Every page is a plain form post that works without JavaScript; htmx requests get the `_item.html` fragment
and swap the next item in place. The assignment engine decides what an annotator may see and store; these
views only render, validate with the kind's form, and pass the answer on. Nothing here reads gold.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from annotation.core.access import (
    annotator_of,
    batches_offered_to,
    get_batch_item_for,
    get_batch_to_annotate,
    get_item_to_write,
)
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
from annotation.core.forms import AnswerForm, FlagForm, SkipForm
from annotation.core.item_page import (
    ItemPage,
    Notice,
    item_page_context,
    kind_scripts,
    read_answer,
    read_side_box,
    spent_ms,
    with_policy,
)
from annotation.core.models import Annotation, Annotator, Batch
from hume.lib.htmx import vary_on_htmx, wants_partial
from tasks_app.core.kinds import ValidationProblem
from tasks_app.models import Item


def batch_rows(annotator: Annotator) -> list[dict[str, Any]]:
    """The annotator's open batches with their progress, for the home page and /annotate/."""
    rows = []
    for batch in batches_offered_to(annotator).select_related("task").order_by("due_date", "name"):
        progress = annotator_progress(annotator, batch)
        finished = progress["done"] + progress["skipped"]
        # a batch named by default ("<task> · <language>") is shown by its task's name alone, not twice
        named = batch.name != default_batch_name(batch.task, batch.language)
        rows.append({"batch": batch, "progress": progress, "finished": finished, "named": named,
                     "complete": finished >= progress["total"]})
    return rows


def _own_annotation(annotator: Annotator, item: Item) -> Annotation | None:
    return Annotation.objects.filter(annotator=annotator, item=item).first()


def _item_context(request: HttpRequest, annotator: Annotator, batch: Batch, item: Item, *,
                  form: AnswerForm | None = None, flag_form: FlagForm | None = None,
                  skip_form: SkipForm | None = None) -> dict[str, Any]:
    """The item page (annotation/core/item_page.py) in the loop's wiring, with the batch header's progress."""
    annotation = _own_annotation(annotator, item)
    answered = annotation is not None and not annotation.skipped
    previous = previous_annotation(annotator, batch, before=item if annotation else None)
    progress = annotator_progress(annotator, batch)
    finished = progress["done"] + progress["skipped"]
    if annotation is not None and annotation.skipped:
        notices = (Notice(f"You skipped this item ({annotation.skip_reason}). Answer it now to replace the skip."),)
    else:
        notices = (Notice("You answered this item already. Change your answer and submit to revise it."),
                   ) if answered else ()
    page = ItemPage(
        answer_url=reverse("annotation:answer", args=[batch.pk, item.pk]),
        skip_url=reverse("annotation:skip", args=[batch.pk, item.pk]),
        flag_url=reverse("annotation:flag", args=[batch.pk, item.pk]),
        submit_label="Save revision" if answered else "Submit",
        flag_label="Flag my answer" if answered else "Flag and skip",
        back_url=reverse("annotation:back", args=[batch.pk, item.pk]) if previous else "", back_hx=True,
        forward_url=reverse("annotation:batch", args=[batch.pk]) if answered else "",
        draft_key=f"{request.user.pk}:{batch.pk}:{item.pk}", answered=annotation is not None,
        open_instructions=finished == 0 and annotation is None, notices=notices)
    shared = item_page_context(page, batch, item, form=form, answer=annotation.value if answered else None,
                               skip_form=skip_form, flag_form=flag_form)
    return {**shared, "batch": batch, "annotation": annotation, "answered": answered, "progress": progress,
            "finished": finished, "previous": previous}


def _page(request: HttpRequest, fragment: str, context: dict[str, Any], *, status: int = 200,
          push_url: str | None = None) -> HttpResponse:
    """htmx gets the fragment that replaces #loop; a plain request (or history restore) gets the whole page."""
    partial = wants_partial(request)
    context = {"kind_scripts": kind_scripts(context["task"]), **context, "fragment": fragment}
    response = with_policy(
        render(request, fragment if partial else "annotation/annotate.html", context, status=status))
    if partial and push_url:
        response["HX-Push-Url"] = push_url
    return response


def _refused(request: HttpRequest, batch: Batch, exc: AssignmentRefused) -> HttpResponse:
    context = {"batch": batch, "task": batch.task, "message": str(exc), "code": getattr(exc, "code", "")}
    return _page(request, "annotation/_refused.html", context, status=409)


def _next(request: HttpRequest, annotator: Annotator, batch: Batch) -> HttpResponse:
    """Render the annotator's next item (the same one again while their hold lives), or the done page."""
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
    """The answer given just before this item, opened for revision (the current item stays held)."""
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
    sent = read_answer(batch, item, request.POST)
    form, flag_form = sent.form, sent.flag_form
    if not sent.valid:
        return _invalid(request, annotator, batch, item, form=form, flag_form=flag_form)
    try:
        submit_answer(annotator, batch, item, form.cleaned_data["value"], time_spent_ms=sent.spent_ms,
                      started_at=sent.started_at, flagged=bool(sent.flag_comment), flag_comment=sent.flag_comment,
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
    skip_form = read_side_box("skip", request.POST)
    if not skip_form.is_valid():
        return _invalid(request, annotator, batch, item, skip_form=skip_form)
    try:
        skip_item(annotator, batch, item, reason=skip_form.reason, time_spent_ms=spent_ms(
            request.POST, batch, item), source="browser")
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    return _after_write(request, annotator, batch)


@login_required
@require_POST
def flag(request: HttpRequest, batch_id: int, item_id: int) -> HttpResponse:
    """Flag without answering: the engine flags an existing answer, or records a flagged skip."""
    annotator, batch, item = get_item_to_write(request.user, batch_id, item_id)
    flag_form = read_side_box("flag", request.POST)
    if not flag_form.is_valid():
        return _invalid(request, annotator, batch, item, flag_form=flag_form)
    try:
        flag_item(annotator, batch, item, comment=flag_form.comment, source="browser")
    except AssignmentRefused as exc:
        return _refused(request, batch, exc)
    return _after_write(request, annotator, batch)
