"""The request log's claims: children of the run's lease, so every answer is bought once and stored once.

Why it is shaped this way:
- Every answer is bought through a row of the request log, claimed *before* the API is called (unique
  (annotator, request key)). The row's `claimed_by` is the claim token of the run's lease
  (hume/jobs/lease.py): the claim is live while that run is running under an unexpired lease, and a claim
  whose run lost its lease (its worker died) is taken over by the next holder. So a re-run, a redelivered task
  or a crashed worker never pays twice for a finished item, and never stores twice (the annotation is written
  ON CONFLICT DO NOTHING on the unique (item, annotator)).
- Claims and answers are written inside the run's `Lease.fenced()`: the transaction first renews the run's
  lease under the run row's lock, so a holder that lost the run claims nothing and stores nothing
  (`LeaseLost`), and a new holder's claim waits until a store in progress has committed. On PostgreSQL a store
  is one statement that does the same itself (annotation/llm/request_sql.py): the hot path keeps one round trip.
- Claims and answers are written a chunk at a time (`claim_many`, `store_many`): one round trip per chunk,
  not per item, so the main thread keeps hundreds of requests in flight; the report hears of a stored
  chunk through one `annotations_imported` signal. On PostgreSQL the two statements are plain SQL
  (annotation/llm/request_sql.py); the ORM path here keeps the same rules for other databases.
- Answers never go through annotation holds or overlap k: they are written directly, with source="llm".
"""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from annotation.core.models import Annotation
from annotation.core.signals import annotations_imported
from annotation.llm.asking import Outcome
from annotation.llm.models import LLMRequest, LLMRun, request_key
from annotation.llm.request_sql import insert_claims, store_outcomes
from hume.jobs.lease import Lease
from tasks_app.models import Item

STORE_CHUNK = 200  # answers per statement: its join grows faster than linearly past a few hundred
STORED_FIELDS = ("status", "finished_at", "answer", "attempts", "prompt_tokens", "completion_tokens", "reasoning",
                 "raw_outputs", "error", "failure_kind", "http_status", "latency_ms", "confidence")


class Pending(NamedTuple):
    """An item still to ask, as the executor needs it (no model instance: a run reads a thousand a second)."""
    pk: int
    uid: str
    payload: dict[str, Any]


class Claim(NamedTuple):
    """A request row this executor holds: what storing its answer needs."""
    pk: int
    item_id: int
    claimed_at: datetime


def is_live(token: uuid.UUID | None) -> bool:
    """Whether a request claim's token is the lease of a run still held (running, lease not lapsed)."""
    return token is not None and LLMRun.objects.filter(
        claim_token=token, status=LLMRun.Status.RUNNING, lease_expires_at__gte=timezone.now()).exists()


def claim(run: LLMRun, lease: Lease, item: Item) -> LLMRequest | None:
    """Claim the item's request row under the run's lease, or None when it is done or claimed by a live run."""
    key = request_key(run.model, run.prompt_version, item.uid)
    with lease.fenced():
        row, created = LLMRequest.objects.get_or_create(
            annotator_id=run.annotator_id, request_key=key,
            defaults={"item_id": item.pk, "run": run, "model": run.model, "prompt_version": run.prompt_version,
                      "claimed_by": lease.token, "claimed_at": timezone.now()},
        )
        return row if created else take_over(run, lease, row)


def take_over(run: LLMRun, lease: Lease, row: LLMRequest) -> LLMRequest | None:
    """An existing row: restore a paid answer, skip a failure or a live claim, or take a dead claim over."""
    if row.status == LLMRequest.Status.SUCCEEDED:
        restore_annotation(run, row)
        return None
    if row.status == LLMRequest.Status.FAILED and not run.retry_failed:
        return None
    if row.status == LLMRequest.Status.CLAIMED and is_live(row.claimed_by):
        return None
    now = timezone.now()
    taken = LLMRequest.objects.filter(pk=row.pk, status=row.status, claimed_by=row.claimed_by).update(
        status=LLMRequest.Status.CLAIMED, claimed_by=lease.token, claimed_at=now, run=run)
    if not taken:
        return None
    row.status, row.claimed_by, row.claimed_at, row.run = LLMRequest.Status.CLAIMED, lease.token, now, run
    return row


def claim_many(run: LLMRun, lease: Lease, items: list[Pending]) -> list[Claim]:
    """`claim` for a chunk of items, fenced by the run's lease: one INSERT of every missing row (ON CONFLICT DO
    NOTHING: the unique (annotator, request key) still decides who owns a row); rows that already existed are
    read and go through `take_over` one by one (rare: re-runs and dead claims). In item order."""
    if not items:
        return []
    with lease.fenced():
        return _claim_many(run, lease, items)


def _claim_many(run: LLMRun, lease: Lease, items: list[Pending]) -> list[Claim]:
    now = timezone.now()
    keys = {request_key(run.model, run.prompt_version, item.uid): item for item in items}
    if connection.vendor == "postgresql":
        inserted = insert_claims(run, lease.token, now, {key: item.pk for key, item in keys.items()})
    else:
        LLMRequest.objects.bulk_create(
            [LLMRequest(annotator_id=run.annotator_id, request_key=key, item_id=item.pk, run=run, model=run.model,
                        prompt_version=run.prompt_version, claimed_by=lease.token, claimed_at=now)
             for key, item in keys.items()], ignore_conflicts=True)
        inserted = {}
    existing = {row.request_key: row for row in LLMRequest.objects.filter(
        annotator_id=run.annotator_id, request_key__in=[key for key in keys if key not in inserted])}
    mine = []
    for key, item in keys.items():
        if key in inserted:
            mine.append(Claim(inserted[key], item.pk, now))
        elif (row := existing.get(key)) is None:
            continue
        elif row.status == LLMRequest.Status.CLAIMED and row.claimed_by == lease.token:
            mine.append(Claim(row.pk, row.item_id, row.claimed_at))  # inserted just now (not PostgreSQL)
        elif (taken := take_over(run, lease, row)) is not None:
            mine.append(Claim(taken.pk, taken.item_id, taken.claimed_at))
    return mine


def restore_annotation(run: LLMRun, row: LLMRequest) -> None:
    """A paid answer whose annotation is missing (deleted by hand) is stored again without a new request."""
    Annotation.objects.get_or_create(item_id=row.item_id, annotator_id=run.annotator_id,
                                     defaults={"batch": run.batch, "value": row.answer, "source": "llm",
                                               "confidence": row.confidence})


def store_many(run: LLMRun, lease: Lease, finished: list[tuple[Claim, Outcome]]) -> None:
    """Store every outcome that arrived together, in one transaction fenced by the run's lease (`LeaseLost`,
    and nothing written, when another worker holds the run now): the run's counters once, the rows still
    claimed by this lease updated in one statement, fatal ones deleted, the answers inserted in one statement
    (ON CONFLICT DO NOTHING on the unique (item, annotator): an answer already there is kept), and one
    `annotations_imported` signal for the report instead of a post_save per row."""
    if not finished:
        return
    if connection.vendor == "postgresql" and not any(out.fatal for _, out in finished):
        stored = _store_many_sql(run, lease, finished)
    else:
        with lease.fenced():
            stored = _store_many(run, lease.token, finished)
    if stored:
        annotations_imported.send(sender=Annotation, task_id=run.task_id)


def _store_many_sql(run: LLMRun, lease: Lease, finished: list[tuple[Claim, Outcome]]) -> int:
    """PostgreSQL: a chunk per statement, each fenced by the lease inside the statement (request_sql.py)."""
    now, pairs, stored = timezone.now(), [(row.pk, out) for row, out in finished], 0
    for start in range(0, len(pairs), STORE_CHUNK):
        held, inserted = store_outcomes(run, lease, now, pairs[start:start + STORE_CHUNK])
        if not held:
            lease.lost.set()
            lease.check()  # raises LeaseLost: this chunk wrote nothing
        stored += inserted
    return stored


def _store_many(run: LLMRun, token: uuid.UUID, finished: list[tuple[Claim, Outcome]]) -> int:
    now = timezone.now()
    with transaction.atomic():
        LLMRun.objects.filter(pk=run.pk).update(
            http_requests=F("http_requests") + sum(out.attempts for _, out in finished),
            prompt_tokens=F("prompt_tokens") + sum(out.prompt_tokens for _, out in finished),
            completion_tokens=F("completion_tokens") + sum(out.completion_tokens for _, out in finished))
        outcomes = {row.pk: (row, out) for row, out in finished}
        locked = {row.pk: row for row in LLMRequest.objects.select_for_update().filter(
            pk__in=list(outcomes), claimed_by=token, status=LLMRequest.Status.CLAIMED).order_by("pk")}
        fatal = [pk for pk in locked if outcomes[pk][1].fatal]  # says nothing about the item: a later run asks
        if fatal:
            LLMRequest.objects.filter(pk__in=fatal).delete()
        updated, answers = [], []
        for pk, row in locked.items():
            claimed, out = outcomes[pk]
            if out.fatal:
                continue
            stored_outcome(row, out, now)
            updated.append(row)
            if out.ok:
                answers.append(Annotation(item_id=row.item_id, annotator_id=run.annotator_id, batch=run.batch,
                                          value=out.value, source="llm", started_at=claimed.claimed_at,
                                          time_spent_ms=out.latency_ms, confidence=row.confidence))
        # One INSERT ... ON CONFLICT DO UPDATE of rows this transaction holds locked: linear in the rows, where
        # bulk_update's CASE per field is quadratic (a second for a hundred answers).
        LLMRequest.objects.bulk_create(updated, update_conflicts=True, unique_fields=["annotator", "request_key"],
                                       update_fields=STORED_FIELDS)
        Annotation.objects.bulk_create(answers, ignore_conflicts=True)
        return len(answers)


def stored_outcome(row: LLMRequest, out: Outcome, now: datetime) -> None:
    """Write an outcome onto its request row (in memory): succeeded with the answer, or failed with why."""
    row.status = LLMRequest.Status.SUCCEEDED if out.ok else LLMRequest.Status.FAILED
    row.finished_at, row.answer = now, (out.value if out.ok else None)
    row.attempts += out.attempts
    row.prompt_tokens += out.prompt_tokens
    row.completion_tokens += out.completion_tokens
    row.reasoning, row.raw_outputs = out.reasoning, [*row.raw_outputs, *out.raw_outputs]
    row.error, row.failure_kind, row.http_status, row.latency_ms = (
        out.error, out.failure_kind, out.http_status, out.latency_ms)
    row.confidence = out.confidence if out.ok else None


def unclaim(token: uuid.UUID, rows: list[Claim]) -> None:
    """Give back claims that were never sent (a pause, a fatal error, the end of a slice): a row this execution
    created is deleted, so the item is simply pending again; a row taken over keeps its history and, its
    run's lease released, is taken over again by the next holder."""
    if rows:
        LLMRequest.objects.filter(pk__in=[row.pk for row in rows], claimed_by=token,
                                  status=LLMRequest.Status.CLAIMED, attempts=0).delete()
