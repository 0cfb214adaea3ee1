"""The three roles as groups, and the one place that says who has which: annotators label, admins manage
studies, researchers read everything (an admin is also a researcher; a superuser is both).

Every check — page views, access helpers, DRF permissions — goes through `roles_of`, which reads the user's
groups once and keeps them on the user object (one query per request: the annotator loop asks on every
call). The API composes `IsAdmin` and `IsResearcher` with DRF's `&` and `|`.

This module is also the one role guard: a page refuses with `require_role(user, role, reason)` (a 403 whose
reason the error page shows) or the decorator `role_required(role, reason)` (logged in first, then the role);
the API with `IsAdmin` / `IsResearcher`. No view, access helper or permission class writes its own
"if not is_admin: raise PermissionDenied" (`tests/test_one_guard.py`).
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

ANNOTATOR, ADMIN, RESEARCHER = "annotator", "admin", "researcher"
PROJECT_APPS = ("tasks_app", "annotation", "agreement", "model_runs", "retrieval", "sage")
User = AbstractBaseUser | AnonymousUser
View = Callable[..., HttpResponse]
REFUSALS = {ADMIN: "Only admins may do this.", RESEARCHER: "Only researchers and admins may read this.",
            ANNOTATOR: "Only annotators may do this."}


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


def allows(user: User, role: str) -> bool:
    """Whether the user acts in the role: ADMIN admins; RESEARCHER researchers and admins; ANNOTATOR annotators."""
    if role == ADMIN:
        return is_admin(user)
    if role == RESEARCHER:
        return is_researcher(user)
    return has_role(user, role)


def require_role(user: User, role: str, reason: str | None = None) -> None:
    """The one role guard: PermissionDenied (a 403 page or API error showing `reason`) unless the user acts in
    `role`. Views, access helpers and API actions call it; `role_required` wraps it for whole views."""
    if not allows(user, role):
        raise PermissionDenied(reason or REFUSALS[role])


def role_required(role: str, reason: str | None = None) -> Callable[[View], View]:
    """A view decorator: the login page for anonymous users, `require_role` for everyone else."""
    def decorate(view: View) -> View:
        @wraps(view)
        def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            require_role(request.user, role, reason)
            return view(request, *args, **kwargs)

        return login_required(guarded)

    return decorate


# The two decorators with each role's own reason, for pages that need no reason of their own.
admin_required = role_required(ADMIN)
researcher_required = role_required(RESEARCHER)


class IsAdmin(BasePermission):
    """DRF: admins only (which implies authenticated)."""

    message = REFUSALS[ADMIN]

    def has_permission(self, request: Request, view: Any) -> bool:
        return allows(request.user, ADMIN)


class IsResearcher(BasePermission):
    """DRF: researchers and admins (which implies authenticated)."""

    message = REFUSALS[RESEARCHER]

    def has_permission(self, request: Request, view: Any) -> bool:
        return allows(request.user, RESEARCHER)
