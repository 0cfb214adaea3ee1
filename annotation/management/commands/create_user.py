"""`python manage.py create_user NAME --role researcher|admin|annotator [--languages eng-Latn] [--password-stdin]`.

The one command that makes a person who logs in, in one of the three roles (hume/roles.py), without the Django
shell (issue 35, item 8). The password is never an argument (a command line is visible to every user of the
machine, and stays in shell histories): it is read from standard input with `--password-stdin` (its first line),
else from the environment variable HUME_USER_PASSWORD, else asked twice at a terminal. It is checked by the
password validators as everywhere else (`annotation.core.annotators.check_password`): a weak one, a taken name or an
annotator without languages stops the command with nothing created.

An admin is staff (the Django admin's pages) and in the admin group, which holds every permission of the
project's apps; a researcher is in the researcher group (every view permission); an annotator is made by
`create_annotator` (the only way to make one) with its languages. An admin is also a researcher (roles.py).
"""
from __future__ import annotations

import getpass
import os
import sys
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.core.annotators import check_password, create_annotator, parse_languages
from hume.roles import ADMIN, ANNOTATOR, RESEARCHER, ensure_role_groups

PASSWORD_VARIABLE = "HUME_USER_PASSWORD"


class Command(BaseCommand):
    help = "Create a researcher, an admin or an annotator who logs in; the password from stdin, the environment " \
           f"({PASSWORD_VARIABLE}) or a prompt, never an argument."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="user name")
        parser.add_argument("--role", required=True, choices=[RESEARCHER, ADMIN, ANNOTATOR])
        parser.add_argument("--languages", default="",
                            help="annotators only: comma-separated MTEB codes, optionally with :native|:fluent …")
        parser.add_argument("--password-stdin", action="store_true",
                            help="read the password from the first line of standard input")

    def handle(self, *args: Any, **options: Any) -> None:
        name, role = options["name"].strip(), options["role"]
        if not name or len(name) > 150:
            raise CommandError("NAME: give a user name of 1 to 150 characters.")
        if get_user_model().objects.filter(username=name).exists():
            raise CommandError(f"NAME: a user named {name!r} exists; nothing was changed.")
        try:
            languages = parse_languages(options["languages"])
        except ValueError as problem:
            raise CommandError(str(problem)) from None
        if role == ANNOTATOR and not languages:
            raise CommandError("--languages: an annotator needs at least one language code, e.g. eng-Latn.")
        if role != ANNOTATOR and languages:
            raise CommandError(f"--languages: only annotators have languages, not a {role}.")
        password = self.password(options["password_stdin"])
        try:
            check_password(password, username=name)
        except ValidationError as refused:
            raise CommandError(f"password refused: {' '.join(refused.messages)} Nothing was created.") from None
        with transaction.atomic():
            if role == ANNOTATOR:
                user = create_annotator(name, password=password, languages=languages).user
            else:
                ensure_role_groups()
                user = get_user_model().objects.create_user(username=name, password=password,
                                                            is_staff=role == ADMIN)
                user.groups.add(Group.objects.get(name=role))
        self.stdout.write(f"User {user.get_username()} created (id {user.pk}, role {role}).")

    def password(self, from_stdin: bool) -> str:
        """The password: stdin's first line, else the environment variable, else asked twice at a terminal."""
        if from_stdin:
            password = sys.stdin.readline().rstrip("\r\n")
            source = "standard input"
        elif os.environ.get(PASSWORD_VARIABLE):
            password, source = os.environ[PASSWORD_VARIABLE], PASSWORD_VARIABLE
        elif sys.stdin.isatty():
            password = getpass.getpass("Password: ")
            if getpass.getpass("Password (again): ") != password:
                raise CommandError("the two passwords differ; nothing was created.")
            source = "the prompt"
        else:
            raise CommandError(f"no password: give it on standard input with --password-stdin, or in "
                               f"{PASSWORD_VARIABLE}; nothing was created.")
        if not password:
            raise CommandError(f"the password from {source} is empty; nothing was created.")
        return password
