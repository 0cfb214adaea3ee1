"""`python manage.py exclude_annotator NAME --reason TEXT`: leave an annotator's answers out of every report.

The answers stay stored; the reports of the tasks they answered are queued again and list the exclusion. The
annotator is deactivated, and the batch items their answers filled go back to the pool until k included answers
are in (docs/crowd.md, "Exclusion").
NAME is an annotator's user name (a study participant's pseudonym, as the participants page shows it).
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.crowd.participants import exclude_annotator
from annotation.models import Annotator


class Command(BaseCommand):
    help = "Exclude an annotator from the reports, with a reason."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("annotator", help="user name")
        parser.add_argument("--reason", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        annotator = Annotator.objects.filter(user__username=options["annotator"]).first()
        if annotator is None:
            raise CommandError(f"ANNOTATOR: no annotator named {options['annotator']!r}.")
        if not options["reason"].strip():
            raise CommandError("--reason: say why the annotator is excluded.")
        tasks = exclude_annotator(annotator, options["reason"])
        self.stdout.write(f"excluded {annotator.name}; reports queued for {len(tasks)} task(s)")
