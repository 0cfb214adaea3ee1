"""`python manage.py create_annotator NAME --languages eng-Latn,dan-Latn [--agent human|llm] [--password P]`.

Idempotent: running it again keeps the account, adds languages that are missing (existing ones keep their
proficiency unless one is given as eng-Latn:fluent), and sets the password only when one is given. A password
is checked as everywhere else (annotation.core.annotators.check_password): a weak one stops the command, nothing
changed.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.core import annotators
from annotation.core.annotators import check_password, create_annotator
from annotation.models import Annotator, AnnotatorLanguage
from hume.roles import ANNOTATOR


def parse_languages(text: str) -> dict[str, str | None]:
    try:
        return annotators.parse_languages(text)
    except ValueError as problem:
        raise CommandError(str(problem)) from None


class Command(BaseCommand):
    help = "Create (or update) an annotator with languages; idempotent."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="user name")
        parser.add_argument("--languages", required=True,
                            help="comma-separated MTEB codes, optionally with :native|:near-native|:fluent")
        parser.add_argument("--agent", choices=[k for k, _ in Annotator.Agent.choices], default=Annotator.Agent.HUMAN,
                            help="who answers: human (default) or llm")
        parser.add_argument("--password", help="set this password (omit to keep the current one)")

    def handle(self, *args: Any, **options: Any) -> None:
        languages = parse_languages(options["languages"])
        if not languages:
            raise CommandError("--languages: give at least one language code.")
        user = get_user_model().objects.filter(username=options["name"]).first()
        if options["password"]:
            try:
                check_password(options["password"], username=options["name"], user=user)
            except ValidationError as exc:
                raise CommandError(f"--password: {' '.join(exc.messages)}") from None
        with transaction.atomic():
            if user is None:
                annotator = create_annotator(options["name"], agent=options["agent"], password=options["password"],
                                             languages=languages)
                created = True
            else:
                annotator, created = self.update(user, options["agent"], options["password"], languages)
        verb = "created" if created else "updated"
        self.stdout.write(f"Annotator {annotator.name} {verb} (id {annotator.pk}, {annotator.agent}, "
                          f"languages {', '.join(sorted(annotator.language_codes()))}).")

    def update(self, user: Any, agent: str, password: str | None,
               languages: dict[str, str | None]) -> tuple[Annotator, bool]:
        """An existing user: make it an annotator of `agent`, add missing languages, set the password if given."""
        if password:
            user.set_password(password)
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get_or_create(name=ANNOTATOR)[0])
        annotator, created = Annotator.objects.get_or_create(user=user, defaults={"agent": agent})
        if not created and annotator.agent != agent:
            annotator.agent = agent
            annotator.save(update_fields=["agent"])
        for code, proficiency in languages.items():
            row, made = AnnotatorLanguage.objects.get_or_create(
                annotator=annotator, language=code,
                defaults={"proficiency": proficiency or AnnotatorLanguage.Proficiency.NATIVE})
            if not made and proficiency and row.proficiency != proficiency:
                row.proficiency = proficiency
                row.save(update_fields=["proficiency"])
        return annotator, created
