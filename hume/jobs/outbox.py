"""The outbox: a job's message is stored with the job and deleted once the broker accepted it, so a job submitted
while Redis is down is sent when Redis is back, not when a worker restarts (issue 35, item 5).

`enqueue_on_commit` (re-exported as `hume.jobs.enqueue_on_commit`) writes an `UnsentMessage` row in the caller's
transaction and, after the commit, tries the broker (`send`): accepted, the row is deleted; refused, the row
stays, records why, and the caller gets `BrokerDown` (pages say "queued, the broker is down" at once).
`send_unsent`, run by the layer's one beat entry (`jobs.requeue_lapsed`, every DEAD_RUN_CHECK_SECONDS) and when a
worker starts, sends every row older than UNSENT_GRACE_SECONDS: a message whose broker was down, and one whose web
process died between the commit and the send. So a job stored during an outage runs within one beat period of
the worker's reconnection.

A copy is harmless, as everywhere in the layer: the job's claim (a conditional UPDATE, hume/jobs/lease.py)
decides who runs it, so a message sent twice (the web process's send accepted, its delete lost) runs the job once.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from kombu.exceptions import OperationalError

from hume.jobs.models import UnsentMessage
from hume.jobs.sending import enqueue

log = logging.getLogger(__name__)

# A row younger than this may still be being sent by the process that wrote it: the beat leaves it alone.
UNSENT_GRACE_SECONDS = 5.0
# Rows sent per transaction of the beat's look.
SEND_BATCH = 100


class BrokerDown(OperationalError):
    """The broker did not accept a job's message. The job is stored and queued; its message waits in the outbox
    and is sent when the broker is back. The text is what a page shows. A kombu OperationalError, as the send's
    own error was, so a caller that catches that still catches this."""

    def __init__(self, task: str, args: list[Any], error: BaseException) -> None:
        self.task, self.job_args, self.error = task, list(args), error
        super().__init__("queued, the broker is down: the job is stored and starts when the task queue (Redis) "
                         f"is reachable again ({broker_error(error)})")

    @property
    def job_key(self) -> Any:
        """The job's key (its task's first argument: a row id), to point the page at the stored job."""
        return self.job_args[0] if self.job_args else None


def broker_error(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text[:200] + '…' if len(text) > 200 else text}"


def enqueue_on_commit(name: str, *args: Any, **options: Any) -> None:
    """Store the job's message with the current transaction and send it once that commits (at once outside
    one). ``args`` and ``options`` must be JSON (ids, a countdown). When the broker refuses it, the message
    stays stored for the beat and `BrokerDown` is raised from the commit: the job is queued, not lost."""
    message = keep(name, args, options)
    transaction.on_commit(lambda: send(message))


def keep(task: str, args: tuple[Any, ...], options: dict[str, Any]) -> UnsentMessage:
    """Store the message in the current transaction (so it exists exactly when the job does)."""
    return UnsentMessage.objects.create(task=task, args=list(args), options=options)


def unsent(task: str, *args: Any) -> bool:
    """Whether a message for this job (task name and arguments) is waiting in the outbox: a caller that knows
    the broker is down need not store another copy."""
    return UnsentMessage.objects.filter(task=task, args=list(args)).exists()


def send(message: UnsentMessage) -> None:
    """Try the broker once for this stored message: delete it when accepted; otherwise record why and raise
    BrokerDown (the row stays for the beat)."""
    try:
        enqueue(message.task, *message.args, **message.options)
    except Exception as exc:  # kombu and redis-py raise their own errors: all mean "not accepted"
        log.warning("%s: not sent, the broker is down (%s); kept in the outbox", message, broker_error(exc))
        UnsentMessage.objects.filter(pk=message.pk).update(error=broker_error(exc), sends_failed=F("sends_failed") + 1)
        raise BrokerDown(message.task, message.args, exc) from exc
    UnsentMessage.objects.filter(pk=message.pk).delete()


def send_unsent(grace_seconds: float = UNSENT_GRACE_SECONDS) -> list[str]:
    """Send every stored message older than ``grace_seconds``, oldest first; stops at the first one the broker
    refuses (it is still down: the next look tries again). Returns what was sent, as "task(args)".

    Rows are read with SELECT … FOR UPDATE SKIP LOCKED on PostgreSQL, so two workers' beats looking at once
    send different rows; each row is deleted in the transaction that sent it."""
    sent: list[str] = []
    skip_locked = connection.features.has_select_for_update_skip_locked
    while True:
        with transaction.atomic():
            rows = UnsentMessage.objects.filter(created_at__lt=timezone.now() - timedelta(seconds=grace_seconds))
            if skip_locked:
                rows = rows.select_for_update(skip_locked=True)
            batch = list(rows.order_by("pk")[:SEND_BATCH])
            if not batch:
                return sent
            for message in batch:
                message.options = due_options(message)
                try:
                    send(message)
                except BrokerDown:
                    return sent
                sent.append(str(message))
        if len(batch) < SEND_BATCH:
            return sent


def due_options(message: UnsentMessage) -> dict[str, Any]:
    """The message's options with a countdown shortened by the time it already waited here."""
    options = dict(message.options)
    if options.get("countdown"):
        waited = (timezone.now() - message.created_at).total_seconds()
        options["countdown"] = max(0.0, float(options["countdown"]) - waited)
    return options
