"""When an exclusion last changed whose answers count on a task (docs/crowd.md, "Exclusion").

Reports are digests of the answers they read, so an exclusion makes a stored report stale by itself. A stored
PPI estimate or escalation plan is computed on request and kept as it is; its page compares the time it was
computed with the task's latest exclusion or undo and says when it read other answers than a new one would.
"""
from __future__ import annotations

from datetime import datetime

from django.db.models import Max

from annotation.models import ExclusionEvent
from tasks_app.models import Task


def exclusion_changed_at(task: Task) -> datetime | None:
    """The time of the latest exclusion or undo of an annotator with answers on the task; None if there is none."""
    return ExclusionEvent.objects.filter(annotator__annotations__item__task=task).aggregate(at=Max("at"))["at"]


def computed_before_exclusion(finished_at: datetime | None, changed_at: datetime | None) -> bool:
    """Whether something computed at `finished_at` read answers an exclusion (or undo) at `changed_at` changed."""
    return bool(finished_at and changed_at and finished_at < changed_at)
