"""Load the demo study: every task in demo/tasks.json, the demo people, one batch per task, and sample answers.

Idempotent: running it again changes nothing, so the run command can call it on every start. The passwords
are printed because this is a local demo; never use them on a server.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand
from django.db import transaction

from annotation.annotators import create_annotator
from annotation.batches import BatchSpec, create_batch
from annotation.importing import import_annotations
from annotation.models import Annotator, AnnotatorLanguage
from hume.roles import ADMIN, ANNOTATOR, RESEARCHER, ensure_role_groups
from tasks_app.importing.items import import_task
from tasks_app.importing.options import ImportOptions
from tasks_app.models import Task

DEMO_DIR = Path(settings.BASE_DIR) / "demo"
DEMO_PASSWORD = "hume-demo"

# (user name, role, languages with proficiency); alice and bob are the style guide's people.
PEOPLE: list[tuple[str, str, dict[str, str]]] = [
    ("carol", ADMIN, {}),
    ("dave", RESEARCHER, {}),
    ("alice", ANNOTATOR, {"eng-Latn": "native", "dan-Latn": "fluent"}),
    ("bob", ANNOTATOR, {"ara-Arab": "native", "eng-Latn": "near-native"}),
]


class Command(BaseCommand):
    help = "Load the demo tasks, people, batches and sample answers (idempotent) and print the logins."

    def handle(self, *args: Any, **options: Any) -> None:
        ensure_role_groups()
        with transaction.atomic():
            people = {name: self.person(name, role, languages) for name, role, languages in PEOPLE}
            annotators = [a for a in (getattr(u, "annotator", None) for u in people.values()) if a]
            for spec in json.loads((DEMO_DIR / "tasks.json").read_text(encoding="utf-8")):
                task = self.task(spec)
                speakers = [a for a in annotators if task.language in a.language_codes()]
                create_batch(BatchSpec(task=task, overlap=spec.get("overlap")), annotators=speakers,
                             created_by=people["carol"])
                if spec.get("answers"):
                    self.sample_answers(task, DEMO_DIR / spec["answers"])
        self.print_logins()

    def person(self, name: str, role: str, languages: dict[str, str]) -> User:
        user = User.objects.filter(username=name).first()
        if user is None and role == ANNOTATOR:
            user = create_annotator(name, password=DEMO_PASSWORD, languages=languages).user
        elif user is None:
            user = User.objects.create_user(username=name, password=DEMO_PASSWORD, is_staff=role == ADMIN,
                                            is_superuser=role == ADMIN)
        user.groups.add(Group.objects.get(name=role))
        if languages:
            annotator, _ = Annotator.objects.get_or_create(user=user)
            for language, proficiency in languages.items():
                AnnotatorLanguage.objects.get_or_create(
                    annotator=annotator, language=language, defaults={"proficiency": proficiency}
                )
        return user

    def task(self, spec: dict[str, Any]) -> Task:
        instructions = (DEMO_DIR / spec["instructions"]).read_text(encoding="utf-8")
        options = ImportOptions(
            name=spec["name"], kind=spec["kind"], language=spec["language"], labels=spec.get("labels"),
            scale=tuple(spec["scale"]) if spec.get("scale") else None, step=spec.get("step"),
            axes=spec.get("axes"), instructions=instructions, mteb_task_name=spec.get("mteb_task_name"),
            mteb_subset=spec.get("mteb_subset"),
        )
        with (DEMO_DIR / spec["file"]).open("rb") as stream:
            summary = import_task(stream, spec["file"], options)
        self.stdout.write(f"  {spec['name']}: {summary.added} added, {summary.unchanged} unchanged")
        return Task.objects.get(name=spec["name"])

    def sample_answers(self, task: Task, path: Path) -> None:
        """Answers of earlier (imported) annotators, so reports have something to show at once."""
        with path.open("rb") as stream:
            summary = import_annotations(stream, path.name, task)
        self.stdout.write(f"    answers: {summary.added} added, {summary.unchanged} unchanged")

    def print_logins(self) -> None:
        self.stdout.write(self.style.SUCCESS(f"\nDemo logins (password for all: {DEMO_PASSWORD})"))
        for name, role, languages in PEOPLE:
            langs = ", ".join(languages) or "-"
            self.stdout.write(f"  {name:<6} {role:<11} languages: {langs}")
