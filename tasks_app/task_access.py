"""Who may see which task — the one access helper the task pages and the task API share.

Researchers and admins see every task; an annotator sees only the tasks they have a batch in. The batch
lookup is an ORM join through the reverse relation (tasks_app never imports annotation's models); roles come
from hume.roles, which holds no models.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, QuerySet
from django.shortcuts import get_object_or_404

from hume.roles import is_admin, is_researcher

from .models import Task

User = AbstractBaseUser | AnonymousUser


def visible_tasks(user: User) -> QuerySet[Task]:
    if is_researcher(user):
        return Task.objects.all()
    if not user.is_authenticated:
        return Task.objects.none()
    # A subquery, not a join, so counts annotated later are not multiplied by batches and assignees.
    return Task.objects.filter(pk__in=Task.objects.filter(batches__assignees__user=user).values("pk"))


def with_counts(tasks: QuerySet[Task]) -> QuerySet[Task]:
    """Item and gold counts in the same query (no query per row in lists)."""
    return tasks.annotate(n_items=Count("items", distinct=True), n_gold=Count("items__gold", distinct=True))


def get_visible_task(user: User, task_id: int) -> Task:
    """The task with counts, or 404 — also for a task that exists but is not the user's to see."""
    return get_object_or_404(with_counts(visible_tasks(user)), pk=task_id)


def may_see_gold(user: User) -> bool:
    """Gold is for admins only (docs/architecture.md); researchers read it through reports, never item by item here."""
    return is_admin(user)


def may_import(user: User) -> bool:
    return is_admin(user)
