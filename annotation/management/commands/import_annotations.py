"""python manage.py import_annotations FILE --task NAME [--replace]: annotations made elsewhere, atomically."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.answer_import import import_annotations
from hume.lib.import_reader import ImportFailed
from tasks_app.models import Task


class Command(BaseCommand):
    help = ("Import annotations (JSONL: item, annotator, annotator_agent, value, ...) into a task. Values are "
            "validated like a browser submit; a bad file imports nothing; the same file twice stores each once.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", help="the .jsonl file")
        parser.add_argument("--task", required=True, help="task name")
        parser.add_argument("--replace", action="store_true",
                            help="replace different earlier answers (the old ones are kept as revisions)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        task = Task.objects.filter(name=opts["task"]).first()
        if task is None:
            raise CommandError(f"no task named {opts['task']!r}")
        try:
            with path.open("rb") as stream:
                summary = import_annotations(stream, path.name, task, replace=opts["replace"])
        except ImportFailed as failed:
            raise CommandError(f"nothing was imported:\n{failed}") from None
        for line in summary.lines():
            self.stdout.write(line)
