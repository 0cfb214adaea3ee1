"""The one list of job types: what the layer needs to find a job whose worker died and send it again.

An app registers each of its job types once, in its AppConfig.ready(): the concrete model (a subclass of
`hume.jobs.models.Job`), the Celery task that works on it and the column whose value that task takes (a
report's task takes the task id, a split run's chunk task the run id). The one beat entry
(`jobs.requeue_lapsed`) and the one `worker_ready` hook (`hume/jobs/tasks.py`) go through this list, so a
new job type needs no beat entry, no hook and no setting of its own.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any

from django.apps import apps
from django.db import models

from hume.jobs.lease import cap


@dataclass(frozen=True, eq=False)
class JobType:
    name: str
    model: str  # "app_label.ModelName"
    task: str  # the Celery task name; it takes the value of `key`
    key: str = "pk"
    # The column saying since when a queued job waits: one queued longer than a lease may have lost its
    # message (a broker restarted without its data) and is sent again when a worker starts.
    queued_since: str = "started_at"
    # Optional: how to send a job again (e.g. a report marks itself queued and reports a broker error on
    # the row); it takes the key's value. Default: `hume.jobs.enqueue(task, key)`.
    requeue: Callable[[Any], Any] | None = None
    # Only these rows are looked at (e.g. chunks of a run still embedding: a failed run's chunks are left alone).
    scope: dict[str, Any] = field(default_factory=dict)
    # Whether a starting worker also sends queued rows that waited longer than a lease; False for a type whose
    # queued rows wait for other jobs (a model run waits for its chunks, which have their own messages).
    resume_queued: bool = True
    # Optional "module:function" returning more keys that need a message although no lease lapsed (a split
    # run whose chunks are all done but whose merge was never written: its worker died in between).
    stranded: str | None = None
    # How many claims a job of the type gets before it fails with the reason; None: settings.JOB_MAX_ATTEMPTS.
    # Every claim is capped (`lease.claim`): there is no uncapped type.
    max_attempts: int | None = None

    def cap(self) -> int:
        return cap(self.max_attempts)

    def model_class(self) -> type[models.Model]:
        return apps.get_model(self.model)

    def stranded_keys(self) -> list[Any]:
        return list(call(self.stranded)) if self.stranded else []


def call(path: str) -> Any:
    """Call the function named "module:function" (imported only when needed: workers, not web processes)."""
    module, name = path.split(":")
    return getattr(import_module(module), name)()


TYPES: dict[str, JobType] = {}


def register(job_type: JobType) -> JobType:
    """Add a job type (idempotent: ready() may run twice in tests)."""
    TYPES[job_type.name] = job_type
    return job_type


def types() -> list[JobType]:
    return list(TYPES.values())
