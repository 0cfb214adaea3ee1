"""What the agreement commands share: the task a command line names (by name, or by id)."""
from __future__ import annotations

from django.core.management.base import CommandError

from tasks_app.models import Task


def find_task(name_or_id: str) -> Task:
    """A task by exact name, or by id when the argument is a number no task is named."""
    task = Task.objects.filter(name=name_or_id).first()
    if task is None and name_or_id.isdigit():
        task = Task.objects.filter(pk=int(name_or_id)).first()
    if task is None:
        raise CommandError(f"no task named {name_or_id!r} (give a task name or id)")
    return task
