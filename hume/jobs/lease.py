"""Claiming a job and keeping it: the conditional UPDATE that decides who runs, and the lease that proves it.

`claim(rows)` turns one claimable row (queued, or running with a lapsed lease) into a running one with a fresh
claim token, in a single UPDATE whose row count decides between racing workers. `claim_next(rows)` does the
same for the first claimable row of many (chunks): on PostgreSQL the candidate is read with
SELECT … FOR UPDATE SKIP LOCKED, so workers asking at once get different rows instead of queueing on one; on
SQLite (one writer at a time) the conditional UPDATE alone is enough. `claim_batch(rows, limit)` claims up to
`limit` of them at once under one token (`BatchLease`): one SELECT and one UPDATE for a process that works fast
enough to take many (a model run's chunks on a GPU), each row's attempts counted as by `claim`.

The returned `Lease` is the holder's only way to write its job: every write filters on the claim token, so a
worker whose lease lapsed and was taken over writes nothing (`Lease.write` returns False and the lease counts
as lost). Writes to other tables (a chunk's predictions, an LLM run's annotations) go inside `Lease.fenced()`,
which first renews the lease under the row's lock: the new holder's claim waits for that transaction, or the
block raises `LeaseLost` and nothing is written. `Lease.kept()` renews the lease from a background thread
every third of its length while the work runs, so a long job stays held and a killed worker's job is free
again within one lease (settings.JOB_LEASE_SECONDS).

Every claim is capped: a job claimed `max_attempts` times (settings.JOB_MAX_ATTEMPTS unless its type says
otherwise) without finishing (each holder killed, out of memory or hung) is not claimed again: it fails with
that reason. Writes without a lease (asking for a job again, cancelling it, failing a parent whose chunk gave
up) are the layer's too: `hume/jobs/control.py`.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, models, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from hume.jobs.models import JobStatus

log = logging.getLogger(__name__)


class LeaseLost(RuntimeError):
    """The job was taken over by another worker (our lease lapsed): this worker must stop writing it."""


def lease_seconds() -> float:
    """How long a claim is trusted without renewal (settings.JOB_LEASE_SECONDS)."""
    return float(settings.JOB_LEASE_SECONDS)


def renew_seconds() -> float:
    """Three renewals per lease: one or two delayed by a busy database do not make a live job look dead."""
    return lease_seconds() / 3


def lease_until(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) + timedelta(seconds=lease_seconds())


def holder_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def claimable(now: datetime) -> Q:
    """Queued, or running under a lease nobody renewed in time (its worker died)."""
    return Q(status=JobStatus.QUEUED) | Q(status=JobStatus.RUNNING, lease_expires_at__lt=now)


def lapsed(now: datetime | None = None) -> Q:
    return Q(status=JobStatus.RUNNING, lease_expires_at__lt=now or timezone.now())


def exhausted_message(limit: int) -> str:
    return (f"Gave up after {limit} attempts: each worker that took this job stopped before finishing it "
            "(killed, out of memory, or hung).")


@dataclass
class Lease:
    """A won claim: the row's model and key, and the token every write of the holder goes through."""

    model: type[models.Model]
    pk: Any
    token: uuid.UUID
    lost: threading.Event = field(default_factory=threading.Event)

    def rows(self) -> models.QuerySet:
        return self.model._default_manager.filter(pk=self.pk, claim_token=self.token)

    def write(self, **fields: Any) -> bool:
        """Update the job row if the claim is still ours; False (and the lease counts as lost) if not."""
        if self.rows().update(**fields):
            return True
        self.lost.set()
        return False

    def renew(self) -> bool:
        return self.write(lease_expires_at=lease_until())

    def renewing_sql(self, sets: str = "", returning: str = "id") -> tuple[str, list[Any]]:
        """An UPDATE of the job row that renews the lease (and sets ``sets``, SQL whose parameters come before
        the returned ones) only while the claim is ours, RETURNING ``returning``: for a caller that renews in
        the same statement as other writes (a CTE). The statement and its parameters."""
        meta, quote = self.model._meta, connection.ops.quote_name
        token = meta.get_field("claim_token").get_db_prep_value(self.token, connection)  # uuid, or 32 hex
        assignments = f"{sets}, lease_expires_at = %s" if sets else "lease_expires_at = %s"
        sql = (f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(meta.pk.column)} = %s "
               f"AND claim_token = %s RETURNING {returning}")
        return sql, [lease_until(), self.pk, token]

    def renew_reading(self, *columns: str) -> tuple[Any, ...]:
        """Renew the lease and read ``columns`` of the row in one statement; `LeaseLost` when it is not ours."""
        sql, params = self.renewing_sql(returning=", ".join(connection.ops.quote_name(c) for c in columns))
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            row = cursor.fetchone()
        if row is None:
            self.lost.set()
            self.check()
        return tuple(row)

    def check(self) -> None:
        """Between steps: stop at once if another worker took the job over."""
        if self.lost.is_set():
            raise LeaseLost(f"{self.model.__name__} {self.pk}: the claim was taken over")

    def finish(self, *, again_if: Q | None = None, **fields: Any) -> bool:
        """Done, with ``fields`` (the results). With ``again_if``, a row matching it goes back to queued with its
        attempts afresh instead (the job was asked for again while it ran: its inputs changed)."""
        done: dict[str, Any] = {"status": JobStatus.DONE}
        if again_if is not None:
            done = {"status": Case(When(again_if, then=Value(JobStatus.QUEUED)), default=Value(JobStatus.DONE)),
                    "attempts": Case(When(again_if, then=Value(0)), default=F("attempts"),
                                     output_field=models.PositiveIntegerField())}
        return self.write(**{**done, "error": "", **self._released(), **fields})

    def fail(self, error: str, **fields: Any) -> bool:
        return self.write(status=JobStatus.FAILED, error=error, **self._released(), **fields)

    def release(self, *, not_an_attempt: bool = False, **fields: Any) -> bool:
        """Hand the job back to the queue unfinished (a time slice ended; a warm shutdown; an admin's pause).
        ``not_an_attempt``: the claim is given back too, so the cap counts only holders that died."""
        if not_an_attempt:
            fields["attempts"] = F("attempts") - 1
        return self.write(status=JobStatus.QUEUED, claim_token=None, lease_expires_at=None, **fields)

    def let_go(self) -> bool:
        """Drop the claim and leave the status as it is (the job was cancelled while it ran)."""
        return self.write(claim_token=None, lease_expires_at=None)

    @staticmethod
    def _released() -> dict[str, Any]:
        return {"claim_token": None, "lease_expires_at": None, "finished_at": timezone.now()}

    @contextmanager
    def fenced(self) -> Iterator[None]:
        """A transaction whose writes count only if the claim is ours: it starts by renewing the lease, which
        locks the job row until commit, so no other worker can claim the job in between."""
        with transaction.atomic():
            if not self.renew():
                raise LeaseLost(f"{self.model.__name__} {self.pk}: the claim was taken over")
            yield

    @contextmanager
    def kept(self) -> Iterator[Lease]:
        """Renew the lease from a background thread while the block runs; the thread stops when the block
        ends or the claim is found taken over (then `lost` is set and `check()` raises)."""
        stop = threading.Event()
        thread = threading.Thread(target=self._renew_until, args=(stop,), daemon=True,
                                  name=f"lease-{self.model.__name__}-{self.pk}")
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()

    def _renew_until(self, stop: threading.Event) -> None:
        # The first renewal comes one interval in, so a short job never opens a second connection.
        try:
            while not stop.wait(renew_seconds()):
                if not self.renew():
                    return  # taken over or finished: nothing of ours to keep alive
        except Exception:  # a failed renewal must not kill the work; the lease may lapse and another take over
            log.exception("%s %s: could not renew its lease", self.model.__name__, self.pk)
        finally:
            connection.close()  # this thread's own connection


@dataclass
class BatchLease(Lease):
    """A won claim of several rows under one token (`claim_batch`): every write goes to all of them, and counts
    only while all of them are still ours; one taken over makes the lease lost (nothing more is written, and the
    others lapse and are claimed again). `pk` is the first row's, `pks` all of them."""

    pks: tuple[Any, ...] = ()

    def rows(self) -> models.QuerySet:
        return self.model._default_manager.filter(pk__in=self.pks, claim_token=self.token)

    def write(self, **fields: Any) -> bool:
        """Update every row, in one transaction rolled back unless all of them were still ours."""
        with transaction.atomic():
            if self.rows().update(**fields) == len(self.pks):
                return True
            transaction.set_rollback(True)
        self.lost.set()
        return False


def cap(max_attempts: int | None = None) -> int:
    """The attempts a job gets: ``max_attempts`` if given, else settings.JOB_MAX_ATTEMPTS."""
    return int(settings.JOB_MAX_ATTEMPTS if max_attempts is None else max_attempts)


def claim(rows: models.QuerySet, *, claimed_by: str = "", may: Q | None = None, max_attempts: int | None = None,
          **fields: Any) -> Lease | None:
    """Claim the job in ``rows`` (one row; of several, the first claimable) if it is claimable (or matches
    ``may``): the conditional UPDATE's row count decides between racing workers.

    ``fields`` are written with the claim (a stage, a progress). A claimable job (or one matching ``may``)
    already claimed ``max_attempts`` times (default settings.JOB_MAX_ATTEMPTS) fails with the reason instead
    of being claimed again. None if not won."""
    now = timezone.now()
    limit = cap(max_attempts)
    takeable = claimable(now) | may if may is not None else claimable(now)
    condition = takeable & Q(attempts__lt=limit)
    pk = rows.filter(condition).values_list("pk", flat=True).first()
    if pk is None:  # none to claim; one that used up its attempts fails now (two statements on the fast path)
        rows.filter(takeable, attempts__gte=limit).update(
            status=JobStatus.FAILED, error=exhausted_message(limit), claim_token=None, lease_expires_at=None,
            finished_at=now)
        return None
    token = uuid.uuid4()
    won = rows.filter(condition, pk=pk).update(  # the condition again: the row may have been claimed meanwhile
        status=JobStatus.RUNNING, claim_token=token, claimed_by=claimed_by, holder=holder_name(), started_at=now,
        finished_at=None, lease_expires_at=lease_until(now), attempts=F("attempts") + 1, **fields)
    return Lease(rows.model, pk, token) if won else None


def claim_next(rows: models.QuerySet, *, claimed_by: str = "", max_attempts: int | None = None,
               order_by: tuple[str, ...] = ("pk",), **fields: Any) -> Lease | None:
    """Claim the first claimable job of ``rows`` (in ``order_by``), skipping rows other workers are claiming
    right now; None when none is left. A row that used up its attempts is failed and skipped (the caller
    fails the parent: `control.fail_parent_of_exhausted`)."""
    skip_locked = connection.features.has_select_for_update_skip_locked
    while True:
        with transaction.atomic():
            candidates = rows.filter(claimable(timezone.now())).order_by(*order_by)
            if skip_locked:
                candidates = candidates.select_for_update(skip_locked=True)
            pk = candidates.values_list("pk", flat=True).first()
            if pk is None:
                return None
            lease = claim(rows.filter(pk=pk), claimed_by=claimed_by, max_attempts=max_attempts, **fields)
        if lease is not None:
            return lease


def claim_batch(rows: models.QuerySet, limit: int, *, claimed_by: str = "", max_attempts: int | None = None,
                order_by: tuple[str, ...] = ("pk",), **fields: Any) -> BatchLease | None:
    """Claim up to ``limit`` claimable rows of ``rows`` (the first in ``order_by``) under one token: one SELECT
    (FOR UPDATE SKIP LOCKED on PostgreSQL, so racing workers get different rows) and one UPDATE, whose
    condition is the claim's again, so a row another worker took meanwhile is not ours. Each row's attempts
    count as one claim's; a row out of attempts is left alone (`claim` fails it). None if none was won."""
    now = timezone.now()
    condition = claimable(now) & Q(attempts__lt=cap(max_attempts))
    token = uuid.uuid4()
    with transaction.atomic():
        candidates = rows.filter(condition).order_by(*order_by)
        if connection.features.has_select_for_update_skip_locked:
            candidates = candidates.select_for_update(skip_locked=True)
        pks = list(candidates.values_list("pk", flat=True)[:limit])
        if not pks:
            return None
        won = rows.filter(condition, pk__in=pks).update(
            status=JobStatus.RUNNING, claim_token=token, claimed_by=claimed_by, holder=holder_name(),
            started_at=now, finished_at=None, lease_expires_at=lease_until(now), attempts=F("attempts") + 1,
            **fields)
    if won != len(pks):  # another worker took some between the two statements (SQLite): those are not ours
        pks = list(rows.filter(claim_token=token).order_by(*order_by).values_list("pk", flat=True))
    return BatchLease(rows.model, pks[0], token, pks=tuple(pks)) if pks else None
