"""`python manage.py release_participant STUDY PLATFORM_ID --reason "…"`.

Lets a crowd participant continue their run on another device (docs/crowd.md, "One browser per run"): the
browser that held the run stops, and the next arrival with PLATFORM_ID through the study's link takes it over.
STUDY is the study link's id (the study page's address, /manage/studies/<id>/). The release is kept with its
reason (DeviceRelease, "the command line" as who) and logged.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.crowd import identity
from annotation.crowd.models import Participant


class Command(BaseCommand):
    help = "Let a crowd participant continue on a new device (the next arrival with their id takes the run)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="study link id")
        parser.add_argument("platform_id", help="the participant's platform id (PROLIFIC_PID or participant=…)")
        parser.add_argument("--reason", required=True, help="why (kept with the release)")

    def handle(self, *args: Any, **options: Any) -> None:
        study = options["study"]
        participant = Participant.objects.select_related("annotator__user").filter(
            link_id=int(study), platform_id=options["platform_id"]).first() if study.isdigit() and len(study) < 19 \
            else None
        if participant is None:
            raise CommandError(f"no participant {options['platform_id'][:64]!r} in study {study[:20]!r}.")
        try:
            identity.release(participant, options["reason"])
        except ValueError as problem:
            raise CommandError(f"--reason: {problem}") from None
        self.stdout.write(f"{participant.annotator.name} ({options['platform_id']}) of study {study} may continue on "
                          "a new device: the next arrival with this id takes over the run.")
