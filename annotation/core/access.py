"""One access helper per object type: every view (HTML and API) reaches batches, items, annotators,
assignments and annotations only through these, so "who may see what" is decided in one place.

Rules (roles from hume.roles): admins manage everything; researchers read everything but never act as an
annotator; an annotator reaches only their own profile, the batches they are assigned to, the items handed to
them and their own answers. Someone else's object answers 404 (its id reveals nothing), an object a user may
read but not change answers 403.
"""
from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.utils import timezone

from annotation.core import rawsql
from annotation.core.models import Annotation, Annotator, Batch, BatchAssignee, BatchItem, Hold
from hume.roles import ADMIN, is_researcher, require_role
from tasks_app.models import Item, Task

User = AbstractBaseUser | AnonymousUser


def annotator_of(user: User) -> Annotator | None:
    """The user's annotator profile, if they have one."""
    if not user.is_authenticated:
        return None
    try:
        return user.annotator
    except Annotator.DoesNotExist:
        return None


def _first(queryset: QuerySet, pk: int | str, *, field: str = "pk"):
    try:
        found = list(queryset.filter(**{field: pk}).order_by()[:1])
    except (ValueError, TypeError):
        return None
    return found[0] if found else None


def _found(queryset: QuerySet, pk: int | str):
    found = _first(queryset, pk)
    if found is None:
        raise Http404(f"No {queryset.model._meta.verbose_name} with id {pk} for you.")
    return found


# --- batches --------------------------------------------------------------------------------------------------

def visible_batches(user: User) -> QuerySet[Batch]:
    batches = Batch.objects.select_related("task")
    if is_researcher(user):
        return batches
    annotator = annotator_of(user)
    if annotator is None:
        return batches.none()
    return batches.filter(Exists(BatchAssignee.objects.filter(batch_id=OuterRef("pk"), annotator_id=annotator.pk)))


def batches_offered_to(annotator: Annotator) -> QuerySet[Batch]:
    """The batches the annotator's lists offer (the my-batches page, the home page, /api/v1/my/batches/): open ones
    they are assigned to, less the stopped ones (`Batch.hands_out` False: a campaign ended), except a stopped batch
    where they still hold an item, which they may still answer (docs/batches.md, "Stopping a batch")."""
    holding = Exists(Hold.objects.filter(batch_item__batch_id=OuterRef("pk"), annotator_id=annotator.pk,
                                          expires_at__gt=timezone.now()))
    return annotator.batches.filter(Q(hands_out=True) | holding, is_open=True)


def get_batch_for(user: User, batch_id: int | str) -> Batch:
    """A batch the user may read: any for admins and researchers, their own for annotators; else 404."""
    return _found(visible_batches(user), batch_id)


def get_batch_to_manage(user: User, batch_id: int | str) -> Batch:
    """A batch the user may change (admins only): 403 for researchers who can read it, 404 for others."""
    batch = get_batch_for(user, batch_id)
    require_role(user, ADMIN, "Only admins manage batches.")
    return batch


def get_batch_to_annotate(user: User, batch_id: int | str) -> tuple[Annotator, Batch]:
    """The user's annotator profile and a batch they are assigned to. Researchers and admins can read the
    batch but not annotate as someone else (403); anyone else gets 404. One statement on the annotator's
    path, which every loop request takes."""
    annotator, batch, _ = _seat_or_refuse(user, batch_id, None)
    return annotator, batch


def get_item_to_write(user: User, batch_id: int | str, item_id: int | str) -> tuple[Annotator, Batch, Item]:
    """As get_batch_to_annotate, plus an item of the batch to answer, skip or flag (404 if it is not in the
    batch), in the same statement. Unlike reading (get_batch_item_for: held or answered items only), writing
    leaves the decision to the engine, which accepts an answer whose hold expired while a slot is free, and
    otherwise says why (not handed to you, overlap full) instead of a 404."""
    annotator, batch, item = _seat_or_refuse(user, batch_id, item_id)
    if item is None:
        raise Http404("No such item in this batch.")
    return annotator, batch, item


def _seat_or_refuse(user: User, batch_id: int | str, item_id: int | str | None) -> tuple[Annotator, Batch, Item | None]:
    seat = _seat(user, batch_id, item_id) if user.is_authenticated else None
    if seat is not None:
        return seat
    get_batch_for(user, batch_id)  # 404 unless the user may at least read it
    raise PermissionDenied("You are not an annotator of this batch.")


_SEAT_COLUMNS = f"{rawsql.columns(Annotator, 'a')}, {rawsql.columns(Batch, 'b')}, {rawsql.columns(Task, 't')}"
_SEAT_FROM = (f"FROM {BatchAssignee._meta.db_table} ba JOIN {Annotator._meta.db_table} a ON a.id = ba.annotator_id "
              f"JOIN {Batch._meta.db_table} b ON b.id = ba.batch_id JOIN {Task._meta.db_table} t ON t.id = b.task_id")
_SEAT_SQL = f"SELECT {_SEAT_COLUMNS} {_SEAT_FROM} WHERE a.user_id = %s AND ba.batch_id = %s"
_SEAT_ITEM_SQL = (f"SELECT {_SEAT_COLUMNS}, {rawsql.columns(Item, 'i')} {_SEAT_FROM} "
                  f"LEFT JOIN {BatchItem._meta.db_table} bi ON bi.batch_id = ba.batch_id AND bi.item_id = %s "
                  f"LEFT JOIN {Item._meta.db_table} i ON i.id = bi.item_id WHERE a.user_id = %s AND ba.batch_id = %s")
_WIDTHS = [rawsql.width(model) for model in (Annotator, Batch, Task)]


def _seat(user: User, batch_id: int | str, item_id: int | str | None) -> tuple[Annotator, Batch, Item | None] | None:
    """The annotator, the batch, its task (and the item, if asked and in the batch) in one prepared statement
    (rawsql.py: the ORM's select_related took longer to build than PostgreSQL to answer), or None when the user
    is not assigned to the batch."""
    try:
        ids = [user.pk, int(batch_id)]
        row = rawsql.one(_SEAT_SQL, ids) if item_id is None else rawsql.one(_SEAT_ITEM_SQL, [int(item_id), *ids])
    except (ValueError, TypeError):
        return None
    if row is None:
        return None
    a, b, t = _WIDTHS
    annotator, batch = rawsql.instance(Annotator, row[:a]), rawsql.instance(Batch, row[a:a + b])
    batch.task = rawsql.instance(Task, row[a + b:a + b + t])
    annotator.user = user
    Annotator._meta.get_field("user").remote_field.set_cached_value(user, annotator)
    item = None
    if item_id is not None and row[a + b + t] is not None:
        item = rawsql.instance(Item, row[a + b + t:])
        if item.task_id == batch.task_id:  # as it is for every item of a batch: saves the engine a query
            item.task = batch.task
    return annotator, batch, item


# --- items in a batch -------------------------------------------------------------------------------------------

def visible_items(user: User, batch: Batch) -> QuerySet[Item]:
    """Items of a batch the user may see: all for readers of everything; for an annotator only the items
    handed to them (a live hold) or already answered by them. Never carries gold (it is another table)."""
    items = Item.objects.filter(batch_items__batch=batch).select_related("task")
    if is_researcher(user):
        return items
    annotator = annotator_of(user)
    if annotator is None:
        return items.none()
    held = Hold.objects.filter(batch_item__batch=batch, batch_item__item_id=OuterRef("pk"),
                               annotator=annotator, expires_at__gt=timezone.now())
    answered = Annotation.objects.filter(item_id=OuterRef("pk"), annotator=annotator, batch=batch)
    return items.filter(Exists(held) | Exists(answered))


def get_batch_item_for(user: User, batch: Batch, item_id: int | str) -> Item:
    """An item of `batch` the user may see (see visible_items); else 404. `batch` comes from get_batch_for."""
    return _found(visible_items(user, batch), item_id)


# --- annotators ---------------------------------------------------------------------------------------------------

def visible_annotators(user: User) -> QuerySet[Annotator]:
    annotators = Annotator.objects.select_related("user").prefetch_related("languages")
    if is_researcher(user):
        return annotators
    annotator = annotator_of(user)
    return annotators.filter(pk=annotator.pk) if annotator else annotators.none()


def get_annotator_for(user: User, annotator_id: int | str) -> Annotator:
    """An annotator profile the user may read: all for readers of everything, their own otherwise; else 404."""
    return _found(visible_annotators(user), annotator_id)


def get_annotator_to_manage(user: User, annotator_id: int | str) -> Annotator:
    annotator = get_annotator_for(user, annotator_id)
    require_role(user, ADMIN, "Only admins manage annotators.")
    return annotator


# --- assignments (an annotator on a batch) --------------------------------------------------------------------------

def visible_assignments(user: User) -> QuerySet[BatchAssignee]:
    assignments = BatchAssignee.objects.select_related("batch", "batch__task", "annotator__user")
    if is_researcher(user):
        return assignments
    annotator = annotator_of(user)
    return assignments.filter(annotator=annotator) if annotator else assignments.none()


def get_assignment_for(user: User, assignment_id: int | str) -> BatchAssignee:
    return _found(visible_assignments(user), assignment_id)


def get_assignment_to_manage(user: User, assignment_id: int | str) -> BatchAssignee:
    assignment = get_assignment_for(user, assignment_id)
    require_role(user, ADMIN, "Only admins change who is assigned to a batch.")
    return assignment


# --- annotations ------------------------------------------------------------------------------------------------------

def visible_annotations(user: User) -> QuerySet[Annotation]:
    annotations = Annotation.objects.select_related("item", "batch", "annotator__user")
    if is_researcher(user):
        return annotations
    annotator = annotator_of(user)
    return annotations.filter(annotator=annotator) if annotator else annotations.none()


def get_annotation_for(user: User, annotation_id: int | str) -> Annotation:
    """An answer the user may read: all for readers of everything, their own for annotators; else 404."""
    return _found(visible_annotations(user), annotation_id)


def get_own_annotation(user: User, annotation_id: int | str) -> Annotation:
    """An answer the user may change: only its own annotator's. A researcher or admin reading someone else's
    answer gets 403 (they may read it, never answer as that person); other annotators get 404."""
    annotation = get_annotation_for(user, annotation_id)
    annotator = annotator_of(user)
    if annotator is None or annotation.annotator_id != annotator.pk:
        raise PermissionDenied("Only the annotator who gave an answer may change it.")
    return annotation
