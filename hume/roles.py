"""The three roles as groups: annotators label, admins manage studies, researchers read everything."""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group, Permission

ANNOTATOR, ADMIN, RESEARCHER = "annotator", "admin", "researcher"
PROJECT_APPS = ("tasks_app", "annotation", "agreement", "retrieval")


def ensure_role_groups(**kwargs: Any) -> None:
    """Create the role groups after migrate; admins get every permission, researchers every view one."""
    project_perms = Permission.objects.filter(content_type__app_label__in=PROJECT_APPS)
    Group.objects.get_or_create(name=ANNOTATOR)
    admin, _ = Group.objects.get_or_create(name=ADMIN)
    admin.permissions.set(project_perms)
    researcher, _ = Group.objects.get_or_create(name=RESEARCHER)
    researcher.permissions.set(project_perms.filter(codename__startswith="view_"))


def has_role(user: AbstractBaseUser | AnonymousUser, role: str) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return role in (ADMIN, RESEARCHER)
    return user.groups.filter(name=role).exists()


def is_admin(user: AbstractBaseUser | AnonymousUser) -> bool:
    return has_role(user, ADMIN)


def is_researcher(user: AbstractBaseUser | AnonymousUser) -> bool:
    """Researchers and admins may read reports and everything else, but never annotate as someone else."""
    return has_role(user, RESEARCHER) or has_role(user, ADMIN)
