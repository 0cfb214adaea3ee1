"""The lease on a running report: how a dead run is told from a slow one.

A run's claim (``reports.claim``) holds the report for ``lease_seconds()``. While the run is alive a
heartbeat thread in its process renews the lease every quarter of that, so a run may take hours, yet a
run whose worker was killed outright (SIGKILL, power loss, OOM killer: nothing left to requeue anything)
lets its lease lapse within ``lease_seconds()``. Any runner may then claim it (``reports.claim``): a new
worker does so when it starts (``tasks.resume_reports``), and a report page's status poll or a Recompute
re-queues it (``reports.requeue_if_dead``). Without this, the dead run's Celery message would come back
only after the broker's visibility timeout (an hour).
"""
from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from agreement.models import Report

log = logging.getLogger(__name__)


def lease_seconds() -> float:
    """How long a running claim is trusted without a heartbeat; after that another runner may take it over."""
    return float(getattr(settings, "REPORT_LEASE_SECONDS", 20))


def heartbeat_seconds() -> float:
    """Four renewals per lease: a busy database delaying one or two does not make a live run look dead."""
    return lease_seconds() / 4


def lease_until() -> datetime:
    return timezone.now() + timedelta(seconds=lease_seconds())


def is_dead(report: Report) -> bool:
    """A running report whose lease has lapsed: its runner stopped heart-beating."""
    return (report.status == Report.Status.RUNNING and report.lease_expires_at is not None
            and report.lease_expires_at < timezone.now())


@contextmanager
def lease_kept(task_id: int, token: uuid.UUID) -> Iterator[None]:
    """Renew the claim's lease from a background thread while the block runs (scoring holds the GIL only
    in short stretches between numpy calls, so the thread gets its turn)."""
    stop = threading.Event()
    thread = threading.Thread(target=_beat, args=(task_id, token, stop), daemon=True,
                              name=f"report-lease-{task_id}")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _beat(task_id: int, token: uuid.UUID, stop: threading.Event) -> None:
    # The thread's first query comes one interval in, so a short run (most of them) never opens a connection.
    try:
        while not stop.wait(heartbeat_seconds()):
            if not Report.objects.filter(task_id=task_id, claim_token=token).update(lease_expires_at=lease_until()):
                return  # the claim was taken over or finished: nothing of ours to keep alive
    except Exception:  # a failed renewal must not kill the run; the lease may lapse and another runner take over
        log.exception("report of task %s: could not renew its lease", task_id)
    finally:
        connection.close()  # this thread's own connection
