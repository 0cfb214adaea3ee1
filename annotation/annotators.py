"""Creating an annotator: the one function every entry point uses (the create_annotator command, the admin
page and API, LLM annotators and judge panels, the annotation import, the demo, the tests).

An annotator is a login (a human one in the annotator group) plus its profile and languages. Without a password the
account cannot log in (LLM annotators, names first met in an import). The password is set as given: the
admin page and the API validate it with Django's validators before they call this.
"""
from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import transaction

from annotation.models import Annotator, AnnotatorLanguage
from hume.roles import ANNOTATOR


def create_annotator(username: str, *, kind: str = Annotator.Kind.HUMAN, password: str | None = None,
                     languages: Mapping[str, str | None] | None = None) -> Annotator:
    """A new user `username` (human: in the annotator group) with an Annotator profile of `kind` and its `languages`
    ({code: proficiency}; None = the default, native). Raises IntegrityError if the user name is taken."""
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=username, password=password or None)
        if kind == Annotator.Kind.HUMAN:  # an LLM's account never logs in, so it holds no role
            user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
        annotator = Annotator.objects.create(user=user, kind=kind)
        AnnotatorLanguage.objects.bulk_create(
            AnnotatorLanguage(annotator=annotator, language=code, **({"proficiency": level} if level else {}))
            for code, level in (languages or {}).items())
    return annotator
