"""The assignment engine: which item an annotator gets next, and which answers are accepted.

One module, used by the browser loop, the JSON API and scripted clients alike, because overlap k must mean the
same thing everywhere: an item is answered by at most k different human annotators of its batch, also when
fifty of them click at once (Argilla's overlap can be exceeded by simultaneous submits; we must be exact).

Why it is exact on PostgreSQL:
- Every write that changes how many people hold an item (a hold, an answer, a skip turned into an answer)
  happens while holding that item's BatchItem row lock (``FOR NO KEY UPDATE``).
- ``next_item`` picks a candidate with one query carrying the count conditions, with ``SKIP LOCKED`` so
  annotators never queue behind each other. Holding the lock, it recounts in a *new statement*: under READ
  COMMITTED that statement sees every hold committed before the lock was granted, which the candidate
  query's older snapshot may have missed. Only then is the hold written; a stale candidate is dropped.
- An annotator's next_item calls are serialised on their BatchAssignee row (two tabs hold one hold); a double
  click on one item is serialised by that item's lock and the unique (item, annotator) constraint.
On SQLite the settings open every atomic block with BEGIN IMMEDIATE, which takes the database write lock up
front: the same statements then run one writer at a time (no row-lock clause there), slower but correct, and
the 30 s busy timeout keeps "database is locked" away from users. The statements are in assignment_sql.py.

Counting rule (docs/batches.md, "How items are handed out"; the functions: "Engine API" there): k counts
non-skipped answers of *human* annotators in this batch plus live holds. A skip frees its slot, and so does
an exclusion: an excluded annotator's answers stay stored but no longer count (`reopen_after_exclusion`). LLM
annotators never consume k: they take no holds, are not limited by k, and may answer every item of a batch
they are assigned to.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from django.db import transaction
from django.db.models import Count, F
from django.utils import timezone

from annotation.core import assignment_sql as sql
from annotation.core.models import Annotation, AnnotationRevision, Annotator, Batch, BatchItem, Hold
from tasks_app.models import Item

REFUSAL_CODES = (
    "not_assignee", "inactive", "batch_closed", "not_held", "overlap_full", "not_in_batch", "other_batch",
)
# A client-reported time above this is a tab left open overnight, not effort on the item.
MAX_TIME_SPENT_MS = 2 * 60 * 60 * 1000
HUMAN = Annotator.Agent.HUMAN


class AssignmentRefused(Exception):
    """A submit/hold the engine will not accept; `.code` is machine-readable, str(exc) is a clear message."""

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
    """What the engine needs to know about an annotator's place on a batch, read under a row lock."""

    overlap: int
    hold_seconds: int
    agent: str
    hands_out: bool = True  # False: a stopped batch hands out nothing new (docs/batches.md, "Stopping a batch")


class _CurrentHold(NamedTuple):
    hold_id: int
    item_id: int


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

def _refuse_unless_open(annotator: Annotator, batch: Batch, *, assigned: bool, active: bool, is_open: bool) -> None:
    if not assigned:
        raise AssignmentRefused("not_assignee", f"{annotator.name} is not assigned to the batch “{batch.name}”.")
    if not active:
        raise AssignmentRefused("inactive", "This annotator account is deactivated; ask an admin to reactivate it.")
    if not is_open:
        raise AssignmentRefused(
            "batch_closed", f"The batch “{batch.name}” is closed: answers can no longer be submitted or changed."
        )


def _lock_seat(annotator: Annotator, batch: Batch, now: datetime) -> tuple[_Seat, _CurrentHold | None]:
    """Serialise this annotator's next_item calls on the batch, read the batch state fresh (it may have just
    closed) and, in the same query, the hold they already hold (None when they hold none)."""
    row = sql.seat(batch_id=batch.pk, annotator_id=annotator.pk, now=now)
    if row is None:
        _refuse_unless_open(annotator, batch, assigned=False, active=True, is_open=True)
    _refuse_unless_open(annotator, batch, assigned=True, active=row.active, is_open=row.is_open)
    held = None if row.current_hold_id is None else _CurrentHold(row.current_hold_id, row.held_item_id)
    return _Seat(row.overlap, row.hold_seconds, row.agent, row.hands_out), held


def _lock_item(annotator: Annotator, batch: Batch, item: Item) -> tuple[int, _Seat]:
    """Lock the item's row in this batch (waiting if needed: every change to its holders happens under it) and
    read the batch and annotator state in the same query: (batch item id, seat)."""
    row = sql.lock_item(batch_id=batch.pk, item_id=item.pk, annotator_id=annotator.pk)
    if row is None:
        _lock_seat(annotator, batch, timezone.now())  # says why if the batch itself is out of reach
        raise AssignmentRefused("not_in_batch", f"This item is not part of the batch “{batch.name}”.")
    _refuse_unless_open(annotator, batch, assigned=row.assigned, active=row.active, is_open=row.is_open)
    return row.batch_item_id, _Seat(row.overlap, row.hold_seconds, row.agent)


def _state(annotator: Annotator, batch: Batch, item: Item, batch_item_id: int, now: datetime) -> sql.State:
    """Everything a submit decides on, in one statement taken after the item's lock was granted."""
    return sql.state(batch_item_id=batch_item_id, item_id=item.pk, batch_id=batch.pk, annotator_id=annotator.pk,
                     now=now)


def _bump(batch_item_id: int, delta: int) -> None:
    BatchItem.objects.filter(pk=batch_item_id).update(human_answers=F("human_answers") + delta)


# --- next item ----------------------------------------------------------------------------------------------

def next_item(annotator: Annotator, batch: Batch, *, now: datetime | None = None) -> Item | None:
    """An item this annotator has not answered whose human answers + live holds are below k, held for them
    for batch.hold_seconds; the same item again while their hold lives (reload); None when nothing is left. A
    stopped batch (`hands_out` False) gives only the item they hold, its hold not extended. Raises
    AssignmentRefused for a closed batch, a non-assignee or an inactive annotator."""
    now = now or timezone.now()
    with transaction.atomic():
        seat, held = _lock_seat(annotator, batch, now)
        if not seat.hands_out:  # stopped: the item a person holds comes back (its hold not extended), no other
            item = None if held is None else Item.objects.get(pk=held.item_id)
        elif seat.agent != HUMAN:  # LLM annotators are not bound by k: the first item they have not answered
            item = sql.first_unanswered(batch_id=batch.pk, annotator_id=annotator.pk)
        elif held is not None:  # a reload: the same item, with the full hold time again
            Hold.objects.filter(pk=held.hold_id).update(expires_at=now + timedelta(seconds=seat.hold_seconds))
            item = Item.objects.get(pk=held.item_id)
        else:
            item = _hold_free_item(annotator, batch, seat, now)
    if item is not None and Batch._meta.get_field("task").is_cached(batch):
        item.task = batch.task  # a batch's items are its task's items; saves the caller a query
    return item


def _hold_free_item(annotator: Annotator, batch: Batch, seat: _Seat, now: datetime) -> Item | None:
    """Candidate (one locking query with the count conditions, SKIP LOCKED), then a conditional claim that
    recounts afresh under the lock; a candidate filled after our snapshot is dropped and the next one tried."""
    tried: list[int] = []
    expires_at = now + timedelta(seconds=seat.hold_seconds)
    while True:
        found = sql.candidate(batch_id=batch.pk, annotator_id=annotator.pk, overlap=seat.overlap, now=now,
                              tried=tried)
        if found is None:
            return None
        if sql.claim(found, batch_id=batch.pk, annotator_id=annotator.pk, overlap=seat.overlap, now=now,
                     expires_at=expires_at):
            return found.item
        tried.append(found.batch_item_id)
        _repair_cache(found, batch.pk)


def _repair_cache(found: sql.Candidate, batch_id: int) -> None:
    """The cache only speeds up next_item; when it proved stale, set it from the rows (we hold the lock)."""
    answers = Annotation.objects.counted().filter(item_id=found.item.pk, batch_id=batch_id, skipped=False,
                                                  annotator__agent=HUMAN).count()
    if answers != found.cached_answers:
        BatchItem.objects.filter(pk=found.batch_item_id).update(human_answers=answers)


# --- submit, skip, flag ---------------------------------------------------------------------------------------

def submit_answer(annotator: Annotator, batch: Batch, item: Item, value: Any, *, time_spent_ms: int | None = None,
                  started_at: datetime | None = None, flagged: bool = False, flag_comment: str = "",
                  source: str = "browser", now: datetime | None = None) -> SubmitResult:
    """Validates `value` with item.task.validate_answer (raises tasks_app.core.kinds.ValidationProblem), stores
    exactly one Annotation per (item, annotator) (idempotent replay), removes the hold. Refuses (AssignmentRefused)
    an item never held for the annotator, a closed batch, or one beyond k. Revising one's own earlier answer is
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
        _lock_item(annotator, batch, item)
        existing = Annotation.objects.filter(item_id=item.pk, annotator_id=annotator.pk, batch_id=batch.pk).first()
        if existing is None:
            answer = _Answer(None, True, skip_reason="flagged", flagged=True, flag_comment=comment, source=source)
            return _record(annotator, batch, item, answer, now or timezone.now())
        existing.flagged, existing.flag_comment = True, comment
        existing.save(update_fields=["flagged", "flag_comment", "updated_at"])
        return SubmitResult(existing, created=False, revised=False)


def _record(annotator: Annotator, batch: Batch, item: Item, answer: _Answer, now: datetime) -> SubmitResult:
    with transaction.atomic():
        batch_item_id, seat = _lock_item(annotator, batch, item)
        state = _state(annotator, batch, item, batch_item_id, now)
        if state.annotation_id is not None:
            existing = Annotation.objects.get(pk=state.annotation_id)
            return _revise(existing, answer, seat, state, batch, batch_item_id, now)
        if seat.agent == HUMAN:
            _check_new_answer(answer, seat, state, now)
        annotation = Annotation(
            item=item, annotator=annotator, batch=batch, value=answer.value, skipped=answer.skipped,
            skip_reason=answer.skip_reason, flagged=answer.flagged, flag_comment=answer.flag_comment,
            started_at=answer.started_at or state.hold_from,
            time_spent_ms=_time_spent(answer.time_spent_ms, state.hold_from, now), source=answer.source,
        )
        counted = seat.agent == HUMAN and not answer.skipped
        sql.insert_answer(annotation, batch_item_id, drop_hold=state.hold_from is not None,
                          delta=+1 if counted else 0)
        return SubmitResult(annotation, created=True, revised=False)


def _check_new_answer(answer: _Answer, seat: _Seat, state: sql.State, now: datetime) -> None:
    """A first answer needs the item to have been handed to this annotator, and a free slot unless the
    hold still reserves one. Answers never exceed k, whatever the holds say."""
    if state.hold_from is None:
        raise AssignmentRefused(
            "not_held", "This item was not handed to you in this batch; open your next item instead."
        )
    if answer.skipped:
        return
    hold_lives = state.hold_until > now
    if state.answers >= seat.overlap or (not hold_lives and state.answers + state.holds >= seat.overlap):
        raise AssignmentRefused(
            "overlap_full", f"This item already has its {seat.overlap} annotator(s) (your reservation had expired), "
                            "so your answer was not stored. Continue with your next item."
        )


def _revise(existing: Annotation, answer: _Answer, seat: _Seat, state: sql.State, batch: Batch, batch_item_id: int,
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
    counts = seat.agent == HUMAN
    if counts and existing.skipped and not answer.skipped and state.answers + state.holds >= seat.overlap:
        raise AssignmentRefused(
            "overlap_full", f"This item already has its {seat.overlap} annotator(s); your skip stays as it was."
        )
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
    if state.hold_from is not None:
        Hold.objects.filter(batch_item_id=batch_item_id, annotator_id=existing.annotator_id).delete()
    return SubmitResult(existing, created=False, revised=True)


def _time_spent(client_ms: int | None, held_at: datetime | None, now: datetime) -> int | None:
    """Server time from hold to submit; a client's own measure is kept when given, bounded by that."""
    server_ms = None
    if held_at is not None:
        server_ms = max(0, int((now - held_at).total_seconds() * 1000))
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


def release_holds(annotator: Annotator, *, now: datetime | None = None) -> int:
    """Drop all live holds of an annotator (deactivation); returns how many."""
    now = now or timezone.now()
    live = Hold.objects.filter(annotator_id=annotator.pk, expires_at__gt=now).count()
    Hold.objects.filter(annotator_id=annotator.pk).delete()
    return live


def set_active(annotator: Annotator, active: bool) -> int:
    """Activate or deactivate an annotator; deactivating returns their held items to the pool at once."""
    with transaction.atomic():
        released = 0 if active else release_holds(annotator)
        annotator.active = active
        annotator.save(update_fields=["active"])  # the post_save hook releases anything held meanwhile
        return released


def release_holds_of_inactive(sender: type, instance: Annotator, **kwargs: Any) -> None:
    """post_save hook: an annotator deactivated anywhere (Django admin too) gives their items back."""
    if not instance.active:
        release_holds(instance)


def recount_answers(batch: Batch) -> int:
    """Set the BatchItem.human_answers cache from the Annotation rows (of included human annotators), for
    answers written outside the engine (an annotation import's bulk_create) and after an exclusion. Not needed
    for correctness — overlap checks count the rows and the engine repairs a stale cache when it meets one —
    but it keeps next_item and progress bars fast and exact. Returns how many items changed."""
    with transaction.atomic():
        rows = list(BatchItem.objects.filter(batch_id=batch.pk).select_for_update(no_key=True).order_by("pk"))
        counts = dict(Annotation.objects.counted().filter(batch_id=batch.pk, skipped=False, annotator__agent=HUMAN)
                      .order_by()
                      .values("item_id").annotate(n=Count("pk")).values_list("item_id", "n"))  # read after the locks
        changed = [row for row in rows if row.human_answers != counts.get(row.item_id, 0)]
        for row in changed:
            row.human_answers = counts.get(row.item_id, 0)
        BatchItem.objects.bulk_update(changed, ["human_answers"], batch_size=1000)
    return len(changed)


def reopen_after_exclusion(annotator: Annotator) -> int:
    """After `annotator` was excluded (excluded_at set, in the caller's transaction): deactivate them (their
    holds go back to the pool, and they can answer no more) and recount the cached answers of every batch they
    answered in, so the items their answers filled are handed out again until k included answers are in.
    Every count that decides a hold or an answer already leaves excluded annotators out (assignment_sql.py),
    and an exclusion only lowers counts, so no item goes above k. Returns how many items reopened."""
    set_active(annotator, False)
    batch_ids = (Annotation.objects.filter(annotator_id=annotator.pk, batch__isnull=False).order_by("batch_id")
                 .values_list("batch_id", flat=True).distinct())
    return sum(recount_answers(batch) for batch in Batch.objects.filter(pk__in=list(batch_ids)).order_by("pk"))


def recount_after_inclusion(annotator: Annotator) -> int:
    """After `annotator` was included again (excluded_at cleared, in the caller's transaction): recount the cached
    answers of every batch they answered in, so their answers fill overlap slots again. Nothing is dropped: an
    item that was handed to someone else meanwhile now holds more than k included answers, and keeps them all
    (the engine gives it to no one more). A live hold on an item that is now full is dropped, under the locks
    the recount holds: its holder could not answer it (answers never exceed k), and would be shown it again and
    again; they get their next item instead. Returns how many of the annotator's items are above k now."""
    answered = Annotation.objects.filter(annotator_id=annotator.pk, batch__isnull=False, skipped=False)
    batch_ids = sorted(set(answered.values_list("batch_id", flat=True)))
    for batch in Batch.objects.filter(pk__in=batch_ids).order_by("pk"):
        recount_answers(batch)
    full = BatchItem.objects.filter(batch_id__in=batch_ids, human_answers__gte=F("batch__overlap"))
    Hold.objects.filter(batch_item__in=full).delete()
    return full.filter(item_id__in=answered.values("item_id"), human_answers__gt=F("batch__overlap")).count()


def annotator_progress(annotator: Annotator, batch: Batch, *, now: datetime | None = None) -> dict[str, int]:
    """What this annotator has done in the batch and how many items they can still get (for progress bars):
    {"done", "skipped", "total", "held", "available"} (docs/batches.md, "Engine API"). One statement that
    never walks the batch item by item, since the loop asks on every request."""
    overlap = batch.overlap if annotator.agent == HUMAN else 1 << 30  # LLM annotators are not bound by k
    return sql.progress(batch_id=batch.pk, annotator_id=annotator.pk, overlap=overlap, now=now or timezone.now())
