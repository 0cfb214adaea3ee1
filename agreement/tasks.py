"""Celery tasks of the agreement app."""
from __future__ import annotations

from celery import shared_task


@shared_task(name="agreement.ping")
def ping(payload: str = "pong") -> str:
    """A trivial round trip through Redis and a worker: used by health checks and tests."""
    return payload
