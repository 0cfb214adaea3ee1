"""The Celery broker transport: kombu's Redis transport, made to outlive a broker that drops under load.

Why (issue 23, item 1): a worker whose Redis went away while tasks ran died with `CRITICAL Unrecoverable error:
AttributeError("'NoneType' object has no attribute 'hostname'")` right after "Restoring 1 unacknowledged
message(s)". In kombu 5.7.0's Redis transport (`kombu/transport/redis.py`) that exception can come from two
places only, `Channel._connparams` and `Transport.supports_batch_publish`, which read
`self.connection.client.hostname`. On a lost connection the worker collects it (`kombu.Connection.collect`),
which closes the channels it still lists and then sets `Transport.client` to None. A channel used after that
step (its close aborted by the broker error, or a late acknowledgement of a task that was running when Redis
went) has no connection pool any more once `Channel.close` dropped it, so its next Redis call builds a pool from
`_connparams`, meets `client is None`, and raises AttributeError. That is not one of the transport's connection
errors, so neither
`kombu.common.ignore_errors` nor `Message.ack_log_error` catches it, and it ends the worker's event loop.
tests/test_worker_broker_loss.py shows the exception on stock kombu for a late acknowledgement; the whole
crash was not reproduced on this project's test machine (the issue saw it 2 of 2 times under its load).

What this module changes, and only for the channels that outlived their connection:

- A channel remembers the connection parameters it was opened with, so after its transport is detached it
  still reaches Redis (an acknowledgement arriving after Redis came back is then stored, and the task is not
  delivered again) or fails with a redis `ConnectionError`, which Celery logs and survives.
- Messages a closing channel could not put back (Redis down) and acknowledgements that could not be stored are
  kept in this process and settled by the next channel that reaches Redis: acknowledgements are stored,
  and the other messages are put back on their queue, unless a task of this worker is still running them (its
  own acknowledgement settles it). Without that, they would wait in Redis's unacknowledged set for the whole
  visibility timeout (an hour, hume/settings.py) before any worker saw them again.

Nothing is kept across processes: a worker that dies leaves its messages to that visibility timeout and the
claims and leases of the jobs themselves (docs/architecture.md). Selected by `CELERY_BROKER_TRANSPORT`.
"""
from __future__ import annotations

import logging
import threading
from typing import Any

from kombu.transport import redis as kombu_redis
from redis.exceptions import ConnectionError as RedisConnectionError

log = logging.getLogger(__name__)

# Delivery tags this process still owes Redis: messages to put back, acknowledgements to store.
_lock = threading.Lock()
_unrestored: set[str] = set()
_unacked: set[str] = set()


def owed() -> tuple[set[str], set[str]]:
    """(messages to put back, acknowledgements to store) still owed to Redis by this process."""
    with _lock:
        return set(_unrestored), set(_unacked)


def running_delivery_tags() -> set[str]:
    """Delivery tags of the tasks this worker process runs now (none outside a Celery worker)."""
    try:
        from celery.worker.state import active_requests
    except ImportError:  # pragma: no cover - Celery is a dependency
        return set()
    tags = set()
    for request in tuple(active_requests):
        message = getattr(request, "message", None)
        tag = getattr(message, "delivery_tag", None)
        if tag is not None:
            tags.add(tag)
    return tags


class QoS(kombu_redis.QoS):
    def restore_unacked(self, client: Any = None) -> None:
        """Put back what this channel delivered, except the tasks still running here: their own
        acknowledgement settles them (stock kombu puts them back too, so they ran twice)."""
        running = running_delivery_tags()
        kept = {tag: message for tag, message in self._delivered.items() if tag in running}
        for tag in kept:
            del self._delivered[tag]
        tags = set(self._delivered)
        try:
            super().restore_unacked(client)
        except self.channel.connection_errors:
            with _lock:
                _unrestored.update(tags - _unacked)
            log.warning("broker unreachable: %d unacknowledged message(s) kept to be put back when it returns",
                        len(tags))
            raise
        finally:
            self._delivered.update(kept)

    def ack(self, delivery_tag: str) -> None:
        with _lock:
            _unrestored.discard(delivery_tag)
        try:
            super().ack(delivery_tag)
        except self.channel.connection_errors:
            with _lock:
                _unacked.add(delivery_tag)
            self._delivered.pop(delivery_tag, None)
            raise
        with _lock:
            _unacked.discard(delivery_tag)

    def settle_owed(self) -> None:
        """Store the acknowledgements and put back the messages this process owes Redis (a fresh channel)."""
        with _lock:
            acks, restores = set(_unacked), set(_unrestored)
        if not acks and not restores:
            return
        running = running_delivery_tags()
        for tag in acks:
            self._remove_from_indices(tag).execute()
            with _lock:
                _unacked.discard(tag)
        put_back = [tag for tag in restores - acks if tag not in running]
        for tag in put_back:
            self.restore_by_tag(tag, leftmost=True)
            with _lock:
                _unrestored.discard(tag)
        log.warning("broker back: %d acknowledgement(s) stored, %d message(s) put back on their queue "
                    "(%d still running here)", len(acks), len(put_back), len(restores - acks) - len(put_back))


class Channel(kombu_redis.Channel):
    QoS = QoS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._saved_connparams: dict[bool, dict[str, Any]] = {}
        super().__init__(*args, **kwargs)
        try:
            self.qos.settle_owed()
        except self.connection_errors as exc:
            log.warning("broker unreachable while settling owed messages (%s); tried again on the next channel",
                        exc)

    def _connparams(self, asynchronous: bool = False) -> dict[str, Any]:
        transport = self.connection
        if transport is None or transport.client is None:
            saved = self._saved_connparams.get(asynchronous) or self._saved_connparams.get(not asynchronous)
            if saved is None:
                raise RedisConnectionError("the broker connection of this channel was closed")
            return dict(saved)
        params = super()._connparams(asynchronous=asynchronous)
        self._saved_connparams[asynchronous] = dict(params)
        return params


class Transport(kombu_redis.Transport):
    Channel = Channel

    @property
    def supports_batch_publish(self) -> bool:
        if self.client is None:
            return False
        return super().supports_batch_publish
