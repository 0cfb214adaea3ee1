"""Creating an annotator: the one function every entry point uses (the create_annotator command, the admin
page and API, LLM annotators and judge panels, the annotation import, the demo, the tests).

An annotator is a login (a human one in the annotator group) plus its profile and languages. Without a password the
account cannot log in (LLM annotators, names first met in an import). Every password, whichever entry point
sets it, passes `check_password` (Django's AUTH_PASSWORD_VALIDATORS, knowing the user name): the form and the
API call it first to show the message beside the field, and `create_annotator` refuses what it refuses.
"""
from __future__ import annotations

from collections.abc import Mapping

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Group
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.core.models import Annotator, AnnotatorLanguage
from hume.roles import ANNOTATOR
from tasks_app.core.models import language_code

PROFICIENCIES = [choice for choice, _ in AnnotatorLanguage.Proficiency.choices]


def parse_languages(text: str) -> dict[str, str | None]:
    """"eng-Latn,dan-Latn:fluent" → {"eng-Latn": None, "dan-Latn": "fluent"}; a ValueError names the entry (the
    create_annotator and create_user commands read --languages with it)."""
    languages: dict[str, str | None] = {}
    for entry in filter(None, (part.strip() for part in text.split(","))):
        code, _, proficiency = entry.partition(":")
        try:
            language_code(code)
        except ValidationError:
            raise ValueError(f"--languages: {code!r} is not an MTEB-style code such as eng-Latn or ara-Arab.") \
                from None
        if proficiency and proficiency not in PROFICIENCIES:
            raise ValueError(f"--languages: proficiency {proficiency!r} of {code} must be one of {PROFICIENCIES}.")
        languages[code] = proficiency or None
    return languages


def check_password(password: str, *, username: str = "", user: AbstractBaseUser | None = None) -> None:
    """Raise django's ValidationError (every validator's message) if `password` may not be set for this user.

    The user (or, before it exists, an unsaved one with its name) is passed, so the similarity validator can
    refuse a password close to the user name."""
    validate_password(password, user if user is not None else get_user_model()(username=username))


def create_annotator(username: str, *, agent: str = Annotator.Agent.HUMAN, password: str | None = None,
                     languages: Mapping[str, str | None] | None = None) -> Annotator:
    """A new user `username` (human: in the annotator group) with an Annotator profile of `agent` and its `languages`
    ({code: proficiency}; None = the default, native). Raises IntegrityError if the user name is taken."""
    if password:
        check_password(password, username=username)
    with transaction.atomic():
        user = get_user_model().objects.create_user(username=username, password=password or None)
        if agent == Annotator.Agent.HUMAN:  # an LLM's account never logs in, so it holds no role
            user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
        annotator = Annotator.objects.create(user=user, agent=agent)
        AnnotatorLanguage.objects.bulk_create(
            AnnotatorLanguage(annotator=annotator, language=code, **({"proficiency": level} if level else {}))
            for code, level in (languages or {}).items())
    return annotator
