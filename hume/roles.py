"""The three roles as groups, and the one place that says who has which: annotators label, admins manage
studies, researchers read everything (an admin is also a researcher; a superuser is both).

Every check — page views, access helpers, DRF permissions — goes through `roles_of`, which reads the user's
groups once and keeps them on the user object (one query per request: the annotator loop asks on every
call). The API composes `IsAdmin` and `IsResearcher` with DRF's `&` and `|`.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

ANNOTATOR, ADMIN, RESEARCHER = "annotator", "admin", "researcher"
PROJECT_APPS = ("tasks_app", "annotation", "agreement", "model_runs", "retrieval", "sage")
User = AbstractBaseUser | AnonymousUser


def ensure_role_groups(**kwargs: Any) -> None:
    """Create the role groups after migrate; admins get every permission, researchers every view one."""
    project_perms = Permission.objects.filter(content_type__app_label__in=PROJECT_APPS)
    Group.objects.get_or_create(name=ANNOTATOR)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    admin.permissions.set(project_perms)
    researcher, _ = Group.objects.get_or_create(name=RESEARCHER)
    researcher.permissions.set(project_perms.filter(codename__startswith="view_"))


def roles_of(user: User) -> frozenset[str]:
    """The user's role groups, read once per user object (so once per request) and cached on it."""
    cached = getattr(user, "_hume_roles", None)
    if cached is None:
        if not user.is_authenticated:
            cached = frozenset()
        elif user.is_superuser:
            cached = frozenset({ADMIN, RESEARCHER})
        else:
            cached = frozenset(user.groups.values_list("name", flat=True))
        user._hume_roles = cached
    return cached


def has_role(user: User, role: str) -> bool:
    return role in roles_of(user)


def is_admin(user: User) -> bool:
    """Admins manage studies: import, batches, annotators, LLM runs."""
    return ADMIN in roles_of(user)


def is_researcher(user: User) -> bool:
    """Researchers and admins may read reports and everything else, but never annotate as someone else."""
    return bool(roles_of(user) & {ADMIN, RESEARCHER})


class IsAdmin(BasePermission):
    """DRF: admins only (which implies authenticated)."""

    message = "Only admins may do this."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_admin(request.user)


class IsResearcher(BasePermission):
    """DRF: researchers and admins (which implies authenticated)."""

    message = "Only researchers and admins may read this."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_researcher(request.user)
