"""Django's createsuperuser, with the password validators also under --noinput (issue 23, item 5).

Django checks AUTH_PASSWORD_VALIDATORS only when it prompts; with --noinput it sets DJANGO_SUPERUSER_PASSWORD
as given, so a deployment script could make an admin with the password "123". This command runs the same
validators first, against a user with the given name and e-mail (the similarity check needs them), and
refuses with their messages. The app `hume` is listed before django.contrib.auth in INSTALLED_APPS so that
this command is the one `manage.py createsuperuser` finds.
"""
from __future__ import annotations

import os
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.management.commands import createsuperuser
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import CommandError


class Command(createsuperuser.Command):
    def handle(self, *args: Any, **options: Any) -> None:
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        if not options["interactive"] and password is not None:
            try:
                validate_password(password, self.user_from(options))
            except ValidationError as refused:
                raise CommandError("DJANGO_SUPERUSER_PASSWORD refused: " + " ".join(refused.messages)) from None
        super().handle(*args, **options)

    @staticmethod
    def user_from(options: dict[str, Any]) -> Any:
        """An unsaved user with the name and the other required fields given by option or environment."""
        user_model = get_user_model()
        fields = {}
        for name in (user_model.USERNAME_FIELD, *user_model.REQUIRED_FIELDS):
            value = options.get(name) or os.environ.get("DJANGO_SUPERUSER_" + name.upper())
            if value and not user_model._meta.get_field(name).many_to_many:
                fields[name] = value
        return user_model(**fields)
