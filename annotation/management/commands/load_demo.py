"""Load the demo study: the demo tasks of every registered kind (its samples' `demo`, files in its folder's demo/,
kinds/samples.py), the demo people, one batch per task, and sample answers.

Idempotent: running it again changes nothing, so the run command can call it on every start. The passwords
are printed because this is a local demo; never use them on a server. So with DEBUG=false (production's
default) the command refuses, unless --staging asks for a demo on a staging server: then every demo account
gets a fresh random password, printed once, instead of the published one (issue 23, item 5).
"""
from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from annotation.answer_import import import_annotations
from annotation.core.annotators import create_annotator
from annotation.core.batches import BatchSpec, create_batch
from annotation.models import Annotator, AnnotatorLanguage
from hume.roles import ADMIN, ANNOTATOR, RESEARCHER, ensure_role_groups
from kinds.kind_registry import KINDS, kind_folder
from kinds.samples import DemoTask
from tasks_app.importing.items import import_task
from tasks_app.importing.options import ImportOptions
from tasks_app.models import Task

DEMO_PASSWORD = "hume-demo"

# (user name, role, languages with proficiency); alice and bob are the style guide's people.
PEOPLE: list[tuple[str, str, dict[str, str]]] = [
    ("carol", ADMIN, {}),
    ("dave", RESEARCHER, {}),
    ("alice", ANNOTATOR, {"eng-Latn": "native", "dan-Latn": "fluent"}),
    ("bob", ANNOTATOR, {"ara-Arab": "native", "eng-Latn": "near-native"}),
]


def demo_tasks() -> list[tuple[str, DemoTask, Path]]:
    """(kind name, demo task, the folder its files are in) of every registered kind's demo, in registry order."""
    return [(name, spec, kind_folder(name) / "demo") for name, kind in KINDS.items() for spec in kind.samples.demo]


class Command(BaseCommand):
    help = "Load the demo tasks, people, batches and sample answers (idempotent) and print the logins."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--staging", action="store_true",
                            help="allow DEBUG=false (a staging demo): the demo accounts get a random password, "
                                 "printed once, not the published one")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["staging"]:
            raise CommandError(f"load_demo creates an admin and other accounts with the published password "
                               f"{DEMO_PASSWORD!r}, so it refuses to run with DEBUG=false; for a demo on a staging "
                               f"server pass --staging (the accounts then get a random password, printed once)")
        self.password = secrets.token_urlsafe(18) if options["staging"] else DEMO_PASSWORD
        self.password_set: set[str] = set()  # the accounts this run gave self.password
        ensure_role_groups()
        with transaction.atomic():
            people = {name: self.person(name, role, languages) for name, role, languages in PEOPLE}
            annotators = [a for a in (getattr(u, "annotator", None) for u in people.values()) if a]
            for kind, spec, folder in demo_tasks():
                task = self.task(kind, spec, folder)
                speakers = [a for a in annotators if task.language in a.language_codes()]
                if spec.batch:
                    create_batch(BatchSpec(task=task, overlap=spec.overlap), annotators=speakers,
                                 created_by=people["carol"])
                if spec.answers:
                    self.sample_answers(task, folder / spec.answers)
        self.print_logins()

    def person(self, name: str, role: str, languages: dict[str, str]) -> User:
        user = User.objects.filter(username=name).first()
        # an earlier development demo's account still on the published password gets the new one
        published = user is not None and self.password != DEMO_PASSWORD and user.check_password(DEMO_PASSWORD)
        if user is None or published:
            self.password_set.add(name)
        if user is None and role == ANNOTATOR:
            user = create_annotator(name, password=self.password, languages=languages).user
        elif user is None:
            user = User.objects.create_user(username=name, password=self.password, is_staff=role == ADMIN,
                                            is_superuser=role == ADMIN)
        elif published:
            user.set_password(self.password)
            user.save(update_fields=["password"])
        user.groups.add(Group.objects.get(name=role))
        if languages:
            annotator, _ = Annotator.objects.get_or_create(user=user)
            for language, proficiency in languages.items():
                AnnotatorLanguage.objects.get_or_create(
                    annotator=annotator, language=language, defaults={"proficiency": proficiency}
                )
        return user

    def task(self, kind: str, spec: DemoTask, folder: Path) -> Task:
        options = ImportOptions(
            name=spec.name, kind=kind, language=spec.language, labels=spec.labels, scale=spec.scale,
            step=spec.step, axes=spec.axes, instructions=(folder / spec.instructions).read_text(encoding="utf-8"),
            mteb_task_name=spec.mteb_task_name, mteb_subset=spec.mteb_subset,
        )
        with (folder / spec.file).open("rb") as stream:
            summary = import_task(stream, spec.file, options)
        self.stdout.write(f"  {spec.name}: {summary.added} added, {summary.unchanged} unchanged")
        return Task.objects.get(name=spec.name)

    def sample_answers(self, task: Task, path: Path) -> None:
        """Answers of earlier (imported) annotators, so reports have something to show at once."""
        with path.open("rb") as stream:
            summary = import_annotations(stream, path.name, task)
        self.stdout.write(f"    answers: {summary.added} added, {summary.unchanged} unchanged")

    def print_logins(self) -> None:
        if self.password == DEMO_PASSWORD:
            self.stdout.write(self.style.SUCCESS(f"\nDemo logins (password for all: {DEMO_PASSWORD})"))
        else:
            self.stdout.write(self.style.SUCCESS(f"\nStaging demo logins (new random password: {self.password}; "
                                                 f"shown once, accounts that existed keep their password)"))
        for name, role, languages in PEOPLE:
            langs = ", ".join(languages) or "-"
            note = "" if self.password == DEMO_PASSWORD else (
                "  password: the new one" if name in self.password_set else "  password: unchanged")
            self.stdout.write(f"  {name:<6} {role:<11} languages: {langs}{note}")
