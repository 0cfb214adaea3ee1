"""The job layer (docs/architecture.md, "The job layer"): sending a Celery job by its task name (here), the
abstract job row (`models.py`), claiming and leasing it (`lease.py`), the job types (`registry.py`) and finding
the jobs whose worker died (`recovery.py`, `tasks.py`). It knows no app: apps register their job types.

Sending by task name means a service module need not import its app's tasks.py.

A tasks.py imports the service it runs (`agreement.tasks` → `agreement.reports`); if the service imported
tasks.py back to queue the job, the two would form an import cycle. The service names the task instead.

The message is sent by the registered task's own `apply_async`, not by `send_task`: the task's decorator
options, argument checking and eager mode then apply exactly as with `task.delay(...)`. A process that has
not imported the task's module yet (a web process) imports every installed app's tasks.py first, as a
worker does at start. An unknown name raises `NotRegistered` rather than sending a message no worker reads.
"""
from __future__ import annotations

from typing import Any

from celery import Task
from django.db import transaction

from hume.celery import app


def registered(name: str) -> Task:
    """The task registered under ``name``, importing the apps' tasks.py modules when it is not yet known."""
    if name not in app.tasks:
        app.autodiscover_tasks(force=True)
    return app.tasks[name]


def enqueue(name: str, *args: Any, **options: Any) -> Any:
    """Send the job now: ``args`` are the task's arguments (ids), ``options`` those of ``apply_async``
    (``countdown``, ``retry``, ...). Broker errors propagate: the caller decides what a failed send means."""
    return registered(name).apply_async(args, **options)


def enqueue_on_commit(name: str, *args: Any, **options: Any) -> None:
    """Send the job once the current transaction commits (at once outside one), as ``delay_on_commit`` does."""
    transaction.on_commit(lambda: enqueue(name, *args, **options))
