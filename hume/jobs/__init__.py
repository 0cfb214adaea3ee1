"""The job layer (docs/architecture.md, "The job layer"): sending a Celery job by its task name (`sending.py`:
`enqueue`, at once; `outbox.py`: `enqueue_on_commit`, stored with the transaction and sent after it), the
abstract job row (`models.py`), claiming and leasing it (`lease.py`), writing its status without a lease
(`control.py`: asking again, cancelling, a parent with chunks), the job types (`registry.py`) and finding the
jobs whose worker died or whose message the broker never took, and sending a job's message again
(`recovery.py`, `tasks.py`). It knows no app: apps register their job types; no app writes a job's status or
lease columns.

A message the broker refused is not lost: `enqueue_on_commit` keeps it in the outbox until the layer's beat
sends it, and the caller gets `BrokerDown` to say "queued, the broker is down" (issue 35, item 5).
"""
from __future__ import annotations

from hume.jobs.outbox import BrokerDown, enqueue_on_commit
from hume.jobs.sending import enqueue, registered

__all__ = ["BrokerDown", "enqueue", "enqueue_on_commit", "registered"]
