"""Sending a Celery job by its task name, at once: what `hume.jobs.enqueue` is (the package re-exports it).

Sending by task name means a service module need not import its app's tasks.py. A tasks.py imports the service
it runs (`agreement.tasks` → `agreement.core.reports`); if the service imported tasks.py back to queue the job, the
two would form an import cycle. The service names the task instead.

The message is sent by the registered task's own `apply_async`, not by `send_task`: the task's decorator
options, argument checking and eager mode then apply exactly as with `task.delay(...)`. A process that has
not imported the task's module yet (a web process) imports every installed app's tasks.py first, as a
worker does at start. An unknown name raises `NotRegistered` rather than sending a message no worker reads.

A request never waits on the broker or the result backend (issue 35, item 5): the message asks for no result
(the job's row is its result, so Celery's Redis result backend does not subscribe to the task's channel, which
it retried for about 20 s with Redis down), and it is tried twice at most, 0.1 s apart (a refused connection
fails at once; an unanswered one after settings.BROKER_CONNECT_TIMEOUT).
"""
from __future__ import annotations

from typing import Any

from celery import Task

from hume.lib.celery_app import app

# Two tries, 0.1 s apart: the outbox (outbox.py) sends a refused message later anyway.
QUICK_RETRY = {"max_retries": 1, "interval_start": 0.1, "interval_step": 0.1, "interval_max": 0.1}


def registered(name: str) -> Task:
    """The task registered under ``name``, importing the apps' tasks.py modules when it is not yet known."""
    if name not in app.tasks:
        app.autodiscover_tasks(force=True)
    return app.tasks[name]


def enqueue(name: str, *args: Any, **options: Any) -> Any:
    """Send the job now: ``args`` are the task's arguments (ids), ``options`` those of ``apply_async``
    (``countdown``, ``retry``, ...); no result is stored and the send is tried twice unless ``options`` say
    otherwise. Broker errors propagate: the caller decides what a failed send means (nothing is kept)."""
    options.setdefault("ignore_result", True)
    options.setdefault("retry", True)
    options.setdefault("retry_policy", QUICK_RETRY)
    return registered(name).apply_async(args, **options)
