"""`python manage.py exclude_annotator NAME --reason TEXT [--undo]`: leave an annotator's answers out of every
report, or (--undo) count them again.

The answers stay stored; the reports of the tasks they answered are queued again and list the exclusion. The
annotator is deactivated, and the batch items their answers filled go back to the pool until k included answers
are in (docs/crowd.md, "Exclusion"). `--undo` includes them again: their answers fill overlap slots again, the
reports recompute with them, and the command says how many of their items now hold more than k answers (all are
kept). Each exclusion and undo is kept with its reason and time (ExclusionEvent; by: the command line).
NAME is an annotator's user name (a study participant's pseudonym, as the participants page shows it).
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.crowd.participants import exclude_annotator, include_annotator, inclusion_summary
from annotation.models import Annotator


class Command(BaseCommand):
    help = "Exclude an annotator from the reports, with a reason (--undo: include them again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("annotator", help="user name")
        parser.add_argument("--reason", required=True)
        parser.add_argument("--undo", action="store_true", help="include an excluded annotator again")

    def handle(self, *args: Any, **options: Any) -> None:
        annotator = Annotator.objects.filter(user__username=options["annotator"]).first()
        if annotator is None:
            raise CommandError(f"ANNOTATOR: no annotator named {options['annotator']!r}.")
        if not options["reason"].strip():
            what = "included again" if options["undo"] else "excluded"
            raise CommandError(f"--reason: say why the annotator is {what}.")
        try:
            if options["undo"]:
                inclusion = include_annotator(annotator, options["reason"])
                self.stdout.write(f"included {annotator.name} again; reports queued for {len(inclusion.task_ids)} "
                                  f"task(s). {inclusion_summary(inclusion.n_items_over_k)}")
                return
            tasks = exclude_annotator(annotator, options["reason"])
        except ValueError as problem:
            raise CommandError(f"ANNOTATOR: {problem}; nothing changed.") from None
        self.stdout.write(f"excluded {annotator.name}; reports queued for {len(tasks)} task(s)")
