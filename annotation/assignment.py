"""The assignment engine: which item an annotator gets next, and which answers are accepted.

One module, used by the browser loop, the JSON API and scripted clients alike, because overlap k must mean the
same thing everywhere: an item is answered by at most k different human annotators of its batch, also when
fifty of them click at once (Argilla's overlap can be exceeded by simultaneous submits; we must be exact).

Why it is exact on PostgreSQL:
- Every write that changes how many people hold an item (a lease, an answer, a skip turned into an answer)
  happens while holding that item's BatchItem row lock (``FOR NO KEY UPDATE``).
- ``next_item`` picks a candidate with one query carrying the count conditions, with ``SKIP LOCKED`` so
  annotators never queue behind each other. Holding the lock, it recounts in a *new statement*: under READ
  COMMITTED that statement sees every lease committed before the lock was granted, which the candidate
  query's older snapshot may have missed. Only then is the lease written; a stale candidate is dropped.
- Each annotator's own calls are serialised on their BatchAssignee row, so a double click or two open tabs
  store one answer and hold one lease.
On SQLite the settings open every atomic block with BEGIN IMMEDIATE, which takes the database write lock up
front: the same code then runs one writer at a time (Django drops the FOR UPDATE clauses there), slower but
correct, and the 30 s busy timeout keeps "database is locked" away from users.

Counting rule (ENGINE_API.md): k counts non-skipped answers of *human* annotators in this batch plus live
leases. A skip frees its slot. LLM annotators never consume k: they take no leases, are not limited by k,
and may answer every item of a batch they are assigned to.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from tasks_app.models import Item

from .models import Annotation, AnnotationRevision, Annotator, Batch, BatchAssignee, BatchItem, Lease

REFUSAL_CODES = (
    "not_assignee", "inactive", "batch_closed", "not_leased", "overlap_full", "not_in_batch", "other_batch",
)
# A client-reported time above this is a tab left open overnight, not effort on the item.
MAX_TIME_SPENT_MS = 2 * 60 * 60 * 1000
HUMAN = Annotator.Kind.HUMAN


class AssignmentRefused(Exception):
    """A submit/lease the engine will not accept; `.code` is machine-readable, str(exc) is a clear message."""

    def __init__(self, code: str, message: str) -> None:
        assert code in REFUSAL_CODES, code
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class SubmitResult:
    annotation: Annotation
    created: bool  # False for an identical replay (double click) — no new row
    revised: bool  # True when an earlier different answer was replaced (previous kept in AnnotationRevision)


class _Seat(NamedTuple):
    """What the engine needs to know about an annotator's place on a batch, read under their row lock."""

    overlap: int
    lease_seconds: int
    kind: str


@dataclass(frozen=True)
class _Answer:
    value: Any
    skipped: bool
    skip_reason: str = ""
    flagged: bool = False
    flag_comment: str = ""
    time_spent_ms: int | None = None
    started_at: datetime | None = None
    source: str = "browser"


# --- locks and counts ---------------------------------------------------------------------------------------

def _lock_seat(annotator: Annotator, batch: Batch) -> _Seat:
    """Serialise this annotator's calls on the batch and read the batch state fresh (it may have just closed)."""
    row = (
        BatchAssignee.objects.filter(batch_id=batch.pk, annotator_id=annotator.pk)
        .select_for_update(no_key=True, of=("self",))
        .values_list("batch__is_open", "batch__overlap", "batch__lease_seconds", "annotator__active",
                     "annotator__kind")
        .first()
    )
    if row is None:
        raise AssignmentRefused("not_assignee", f"{annotator.name} is not assigned to the batch “{batch.name}”.")
    is_open, overlap, lease_seconds, active, kind = row
    if not active:
        raise AssignmentRefused("inactive", "This annotator account is deactivated; ask an admin to reactivate it.")
    if not is_open:
        raise AssignmentRefused(
            "batch_closed", f"The batch “{batch.name}” is closed: answers can no longer be submitted or changed."
        )
    return _Seat(overlap, lease_seconds, kind)


def _lock_batch_item(batch: Batch, item: Item) -> tuple[int, int]:
    """Lock the item's row in this batch (waiting if needed): every change to its holders happens under it."""
    row = (
        BatchItem.objects.filter(batch_id=batch.pk, item_id=item.pk)
        .select_for_update(no_key=True)
        .values_list("pk", "human_answers")
        .first()
    )
    if row is None:
        raise AssignmentRefused("not_in_batch", f"This item is not part of the batch “{batch.name}”.")
    return row


def _live_leases(now: datetime) -> Subquery:
    """Live leases on the outer BatchItem, as a correlated count."""
    leases = Lease.objects.filter(batch_item_id=OuterRef("pk"), expires_at__gt=now).order_by()
    return Subquery(leases.values("batch_item_id").annotate(n=Count("pk")).values("n"), output_field=IntegerField())


def _holders(batch_item_id: int, item_id: int, batch_id: int, other_than: int, now: datetime) -> tuple[int, int]:
    """(non-skipped human answers, live leases of others than `other_than`) on an item, read in a fresh statement.

    Called while holding the BatchItem lock, so the numbers cannot change before the caller writes. Callers
    never hold a non-skipped answer on the item themselves, so the answer count is the whole count.
    """
    answers = Annotation.objects.filter(item_id=item_id, batch_id=batch_id, skipped=False, annotator__kind=HUMAN)
    answers = answers.order_by().values("item_id").annotate(n=Count("pk"))
    leases = Lease.objects.filter(batch_item_id=batch_item_id, expires_at__gt=now).exclude(annotator_id=other_than)
    leases = leases.order_by().values("batch_item_id").annotate(n=Count("pk"))
    row = (
        BatchItem.objects.filter(pk=batch_item_id)
        .annotate(
            n_answers=Coalesce(Subquery(answers.values("n"), output_field=IntegerField()), Value(0)),
            n_leases=Coalesce(Subquery(leases.values("n"), output_field=IntegerField()), Value(0)),
        )
        .values_list("n_answers", "n_leases", "human_answers")
        .get()
    )
    if row[0] != row[2]:
        # The cache only speeds up next_item; repair it whenever the true count is at hand.
        BatchItem.objects.filter(pk=batch_item_id).update(human_answers=row[0])
    return row[0], row[1]


def _bump(batch_item_id: int, delta: int) -> None:
    BatchItem.objects.filter(pk=batch_item_id).update(human_answers=F("human_answers") + delta)


# --- next item ----------------------------------------------------------------------------------------------

def next_item(annotator: Annotator, batch: Batch, *, now: datetime | None = None) -> Item | None:
    """An item this annotator has not answered whose human answers + live leases are below k, leased to them
    for batch.lease_seconds; the same item again while their lease lives (reload); None when nothing is left.
    Raises AssignmentRefused for a closed batch, a non-assignee or an inactive annotator."""
    now = now or timezone.now()
    with transaction.atomic():
        seat = _lock_seat(annotator, batch)
        if seat.kind != HUMAN:
            item_id = _first_unanswered(annotator, batch)
        else:
            item_id = _renew_held_lease(annotator, batch, seat, now) or _lease_free_item(annotator, batch, seat, now)
    if item_id is None:
        return None
    return Item.objects.select_related("task").get(pk=item_id)


def _mine(annotator: Annotator) -> Exists:
    return Exists(Annotation.objects.filter(item_id=OuterRef("item_id"), annotator_id=annotator.pk))


def _first_unanswered(annotator: Annotator, batch: Batch) -> int | None:
    """LLM annotators are not bound by k: the first item of the batch they have not answered."""
    rows = BatchItem.objects.filter(batch_id=batch.pk).filter(~_mine(annotator)).order_by("position")
    return rows.values_list("item_id", flat=True).first()


def _renew_held_lease(annotator: Annotator, batch: Batch, seat: _Seat, now: datetime) -> int | None:
    """A reload shows the item the annotator already holds, and gives them the full lease time again."""
    held = (
        Lease.objects.filter(annotator_id=annotator.pk, batch_item__batch_id=batch.pk, expires_at__gt=now)
        .exclude(Exists(Annotation.objects.filter(item_id=OuterRef("batch_item__item_id"),
                                                  annotator_id=annotator.pk)))
        .order_by("batch_item__position")
        .values_list("pk", "batch_item__item_id")
        .first()
    )
    if held is None:
        return None
    Lease.objects.filter(pk=held[0]).update(expires_at=now + timedelta(seconds=seat.lease_seconds))
    return held[1]


def _candidates(annotator: Annotator, batch: Batch, seat: _Seat, now: datetime, tried: list[int]):
    """The one locking query: the first unlocked item with room, the count conditions evaluated in SQL."""
    return (
        BatchItem.objects.filter(batch_id=batch.pk, human_answers__lt=seat.overlap)
        .exclude(pk__in=tried)
        .filter(~_mine(annotator))
        .alias(taken=F("human_answers") + Coalesce(_live_leases(now), Value(0)))
        .filter(taken__lt=seat.overlap)
        .order_by("position")
        .select_for_update(no_key=True, skip_locked=True, of=("self",))
        .values_list("pk", "item_id")
    )


def _lease_free_item(annotator: Annotator, batch: Batch, seat: _Seat, now: datetime) -> int | None:
    tried: list[int] = []
    while True:
        candidate = _candidates(annotator, batch, seat, now, tried).first()
        if candidate is None:
            return None
        batch_item_id, item_id = candidate
        answers, leases = _holders(batch_item_id, item_id, batch.pk, annotator.pk, now)
        if answers + leases < seat.overlap:
            _write_lease(batch_item_id, annotator, seat, now)
            return item_id
        tried.append(batch_item_id)  # filled after our snapshot was taken; the next query sees newer state


def _write_lease(batch_item_id: int, annotator: Annotator, seat: _Seat, now: datetime) -> None:
    expires_at = now + timedelta(seconds=seat.lease_seconds)
    renewed = Lease.objects.filter(batch_item_id=batch_item_id, annotator_id=annotator.pk).update(
        leased_at=now, expires_at=expires_at
    )
    if not renewed:  # an expired lease of the same annotator is reused: one row per (item, annotator)
        Lease.objects.create(batch_item_id=batch_item_id, annotator=annotator, leased_at=now, expires_at=expires_at)


# --- submit, skip, flag ---------------------------------------------------------------------------------------

def submit_answer(annotator: Annotator, batch: Batch, item: Item, value: Any, *, time_spent_ms: int | None = None,
                  started_at: datetime | None = None, flagged: bool = False, flag_comment: str = "",
                  source: str = "browser", now: datetime | None = None) -> SubmitResult:
    """Validates `value` with item.task.validate_answer (raises tasks_app.kinds.ValidationProblem), stores
    exactly one Annotation per (item, annotator) (idempotent replay), removes the lease. Refuses (AssignmentRefused)
    an item never leased to the annotator, a closed batch, or one beyond k. Revising one's own earlier answer is
    allowed while the batch is open and keeps the previous value in AnnotationRevision."""
    clean = item.task.validate_answer(value, item.payload)
    answer = _Answer(clean, False, flagged=flagged, flag_comment=flag_comment, time_spent_ms=time_spent_ms,
                     started_at=started_at, source=source)
    return _record(annotator, batch, item, answer, now or timezone.now())


def skip_item(annotator: Annotator, batch: Batch, item: Item, *, reason: str, flag_comment: str = "",
              flagged: bool = False, time_spent_ms: int | None = None, source: str = "browser",
              now: datetime | None = None) -> SubmitResult:
    """Records a skip (value None, skipped=True, skip_reason) so the item leaves this annotator's queue.
    A skip frees its overlap slot: another annotator gets the item instead."""
    answer = _Answer(None, True, skip_reason=(reason or "")[:500], flagged=flagged, flag_comment=flag_comment,
                     time_spent_ms=time_spent_ms, source=source)
    return _record(annotator, batch, item, answer, now or timezone.now())


def flag_item(annotator: Annotator, batch: Batch, item: Item, *, comment: str, source: str = "browser",
              now: datetime | None = None) -> SubmitResult:
    """Marks the item as problematic: sets flagged+flag_comment on the annotator's answer if it exists,
    otherwise records a flagged skip (the item leaves their queue)."""
    with transaction.atomic():
        _lock_seat(annotator, batch)
        existing = Annotation.objects.filter(item_id=item.pk, annotator_id=annotator.pk, batch_id=batch.pk).first()
        if existing is None:
            answer = _Answer(None, True, skip_reason="flagged", flagged=True, flag_comment=comment, source=source)
            return _record(annotator, batch, item, answer, now or timezone.now())
        existing.flagged, existing.flag_comment = True, comment
        existing.save(update_fields=["flagged", "flag_comment", "updated_at"])
        return SubmitResult(existing, created=False, revised=False)


def _record(annotator: Annotator, batch: Batch, item: Item, answer: _Answer, now: datetime) -> SubmitResult:
    with transaction.atomic():
        seat = _lock_seat(annotator, batch)
        batch_item_id, _ = _lock_batch_item(batch, item)
        existing = Annotation.objects.filter(item_id=item.pk, annotator_id=annotator.pk).first()
        if existing is not None:
            return _revise(existing, answer, seat, batch, batch_item_id, now)
        lease = Lease.objects.filter(batch_item_id=batch_item_id, annotator_id=annotator.pk).first()
        if seat.kind == HUMAN:
            _check_new_answer(answer, lease, seat, batch, batch_item_id, item, annotator, now)
        annotation = Annotation.objects.create(
            item=item, annotator=annotator, batch=batch, value=answer.value, skipped=answer.skipped,
            skip_reason=answer.skip_reason, flagged=answer.flagged, flag_comment=answer.flag_comment,
            started_at=answer.started_at or (lease.leased_at if lease else None),
            time_spent_ms=_time_spent(answer.time_spent_ms, lease, now), source=answer.source,
        )
        if lease is not None:
            lease.delete()
        if seat.kind == HUMAN and not answer.skipped:
            _bump(batch_item_id, +1)
        return SubmitResult(annotation, created=True, revised=False)


def _check_new_answer(answer: _Answer, lease: Lease | None, seat: _Seat, batch: Batch, batch_item_id: int,
                      item: Item, annotator: Annotator, now: datetime) -> None:
    """A first answer needs the item to have been handed to this annotator, and a free slot unless the
    lease still reserves one. Answers never exceed k, whatever the leases say."""
    if lease is None:
        raise AssignmentRefused(
            "not_leased", "This item was not handed to you in this batch; open your next item instead."
        )
    if answer.skipped:
        return
    answers, leases = _holders(batch_item_id, item.pk, batch.pk, annotator.pk, now)
    lease_lives = lease.expires_at > now
    if answers >= seat.overlap or (not lease_lives and answers + leases >= seat.overlap):
        raise AssignmentRefused("overlap_full", _full_message(seat))


def _full_message(seat: _Seat) -> str:
    return (f"This item already has its {seat.overlap} annotator(s) (your reservation had expired), so your "
            "answer was not stored. Continue with your next item.")


def _revise(existing: Annotation, answer: _Answer, seat: _Seat, batch: Batch, batch_item_id: int,
            now: datetime) -> SubmitResult:
    """A second submit on one's own answer: an identical replay changes nothing; a different one is a revision
    that keeps the earlier value. Turning a skip into an answer needs a free slot, like a first answer."""
    if existing.batch_id != batch.pk:
        raise AssignmentRefused(
            "other_batch", "You already answered this item in another batch; it can only be changed there."
        )
    if existing.skipped == answer.skipped and (answer.skipped or existing.value == answer.value):
        if answer.flagged and not existing.flagged:
            existing.flagged, existing.flag_comment = True, answer.flag_comment
            existing.save(update_fields=["flagged", "flag_comment", "updated_at"])
        return SubmitResult(existing, created=False, revised=False)
    counts = seat.kind == HUMAN
    if counts and existing.skipped and not answer.skipped:
        answers, leases = _holders(batch_item_id, existing.item_id, batch.pk, existing.annotator_id, now)
        if answers + leases >= seat.overlap:
            raise AssignmentRefused("overlap_full", f"This item already has its {seat.overlap} annotator(s); "
                                                    "your skip stays as it was.")
    AnnotationRevision.objects.create(annotation=existing, value=existing.value, skipped=existing.skipped,
                                      previous_submitted_at=existing.submitted_at)
    if counts and existing.skipped != answer.skipped:
        _bump(batch_item_id, -1 if answer.skipped else +1)
    existing.value, existing.skipped, existing.skip_reason = answer.value, answer.skipped, answer.skip_reason
    existing.submitted_at, existing.source = now, answer.source
    existing.flagged = existing.flagged or answer.flagged
    existing.flag_comment = answer.flag_comment if answer.flagged else existing.flag_comment
    existing.save(update_fields=["value", "skipped", "skip_reason", "submitted_at", "source", "flagged",
                                 "flag_comment", "updated_at"])
    Lease.objects.filter(batch_item_id=batch_item_id, annotator_id=existing.annotator_id).delete()
    return SubmitResult(existing, created=False, revised=True)


def _time_spent(client_ms: int | None, lease: Lease | None, now: datetime) -> int | None:
    """Server time from lease to submit; a client's own measure is kept when given, bounded by that."""
    server_ms = None
    if lease is not None:
        server_ms = max(0, int((now - lease.leased_at).total_seconds() * 1000))
    if client_ms is None:
        return None if server_ms is None else min(server_ms, MAX_TIME_SPENT_MS)
    ceiling = MAX_TIME_SPENT_MS if server_ms is None else min(server_ms, MAX_TIME_SPENT_MS)
    return max(0, min(int(client_ms), ceiling))


# --- navigation, deactivation, progress ------------------------------------------------------------------------

def previous_annotation(annotator: Annotator, batch: Batch, *, before: Item | None = None) -> Annotation | None:
    """The annotator's answer submitted just before `before` (or their latest), for "back to revise".
    Order is first-submission order (ids), so revising an answer does not reshuffle the way back."""
    answers = Annotation.objects.filter(annotator_id=annotator.pk, batch_id=batch.pk).select_related("item")
    if before is not None:
        anchor = answers.filter(item_id=before.pk).values_list("pk", flat=True).first()
        if anchor is not None:
            answers = answers.filter(pk__lt=anchor)
    return answers.order_by("-pk").first()


def release_leases(annotator: Annotator, *, now: datetime | None = None) -> int:
    """Drop all live leases of an annotator (deactivation); returns how many."""
    now = now or timezone.now()
    live = Lease.objects.filter(annotator_id=annotator.pk, expires_at__gt=now).count()
    Lease.objects.filter(annotator_id=annotator.pk).delete()
    return live


def set_active(annotator: Annotator, active: bool) -> int:
    """Activate or deactivate an annotator; deactivating returns their leased items to the pool at once."""
    with transaction.atomic():
        released = 0 if active else release_leases(annotator)
        annotator.active = active
        annotator.save(update_fields=["active"])  # the post_save hook releases anything leased meanwhile
        return released


def release_leases_of_inactive(sender: type, instance: Annotator, **kwargs: Any) -> None:
    """post_save hook: an annotator deactivated anywhere (Django admin too) gives their items back."""
    if not instance.active:
        release_leases(instance)


def annotator_progress(annotator: Annotator, batch: Batch, *, now: datetime | None = None) -> dict[str, int]:
    """What this annotator has done in the batch and how many items they can still get (for progress bars):
    {"done", "skipped", "total"} as ENGINE_API.md says, plus "leased" and "available"."""
    now = now or timezone.now()
    counts = Annotation.objects.filter(annotator_id=annotator.pk, batch_id=batch.pk).aggregate(
        done=Count("pk", filter=Q(skipped=False)), skipped=Count("pk", filter=Q(skipped=True))
    )
    open_items = BatchItem.objects.filter(batch_id=batch.pk).filter(~_mine(annotator))
    held = Exists(Lease.objects.filter(batch_item_id=OuterRef("pk"), annotator_id=annotator.pk, expires_at__gt=now))
    leased = open_items.filter(held).count()
    if annotator.kind == HUMAN:
        others = Lease.objects.filter(batch_item_id=OuterRef("pk"), expires_at__gt=now).exclude(
            annotator_id=annotator.pk).order_by().values("batch_item_id").annotate(n=Count("pk")).values("n")
        taken = F("human_answers") + Coalesce(Subquery(others, output_field=IntegerField()), Value(0))
        open_items = open_items.alias(taken=taken).filter(Q(taken__lt=batch.overlap) | held)
    available = open_items.count()
    return {"done": counts["done"], "skipped": counts["skipped"], "total": counts["done"] + counts["skipped"]
            + available, "leased": leased, "available": available}
