"""`python manage.py create_batch TASK --language LANG --overlap K --annotators a,b,c [--name NAME]`.

Prints the new batch's id on the last line (and nothing else on stdout), so scripts can capture it.
Idempotent: the same task and name return the same batch, adding any annotators not yet assigned.
TASK is a task name or id. Annotators without the language are refused unless --override-reason is given.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.core.batches import AssignmentProblem, BatchSpec, create_batch
from annotation.models import Annotator
from tasks_app.models import Task


def find_task(ref: str) -> Task:
    task = Task.objects.filter(name=ref).first()
    if task is None and ref.isdigit():
        task = Task.objects.filter(pk=int(ref)).first()
    if task is None:
        raise CommandError(f"TASK: no task named (or with id) {ref!r}.")
    return task


def find_annotators(names: str) -> list[Annotator]:
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    found = {a.name: a for a in Annotator.objects.filter(user__username__in=wanted).select_related("user")}
    missing = [n for n in wanted if n not in found]
    if missing:
        raise CommandError(f"--annotators: no annotator named {', '.join(missing)} "
                           "(create them with manage.py create_annotator).")
    return [found[n] for n in wanted]


class Command(BaseCommand):
    help = "Create a batch of a task's pool items for annotators of one language; prints the batch id."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name or id")
        parser.add_argument("--language", help="MTEB code; default: the task's language")
        parser.add_argument("--overlap", type=int, help="k annotators per item; default: HUME preset (eng 2, else 1)")
        parser.add_argument("--annotators", default="", help="comma-separated user names")
        parser.add_argument("--name", help="batch name; default: 'TASK · LANGUAGE'")
        parser.add_argument("--hold-seconds", "--lease-seconds", dest="hold_seconds", type=int, default=900,
                            help="how long an item stays held for the annotator it was handed to "
                                 "(--lease-seconds: its old name, still accepted)")
        parser.add_argument("--override-reason", default="", help="assign annotators without the language anyway")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        annotators = find_annotators(options["annotators"])
        if options["overlap"] is not None and options["overlap"] < 1:
            raise CommandError("--overlap: k must be at least 1.")
        spec = BatchSpec(task=task, language=options["language"], overlap=options["overlap"], name=options["name"],
                         hold_seconds=options["hold_seconds"])
        try:
            batch, created = create_batch(spec, annotators=annotators, override_reason=options["override_reason"])
        except AssignmentProblem as problem:
            raise CommandError(f"--{problem.field}: {problem.message}") from None
        state = "created" if created else "exists"
        self.stderr.write(f"Batch “{batch.name}” {state}: {batch.batch_items.count()} items, k = {batch.overlap}, "
                          f"{batch.assignees.count()} annotator(s).")
        self.stdout.write(str(batch.pk))
