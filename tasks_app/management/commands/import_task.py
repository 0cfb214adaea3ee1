"""python manage.py import_task FILE --name NAME --kind KIND --language LANG [...]: the CLI face of import_task."""
from __future__ import annotations

from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from hume.lib.import_reader import ImportFailed
from tasks_app.core.kinds import KINDS
from tasks_app.importing import import_task, parse_options


class Command(BaseCommand):
    help = ("Import a dataset (JSONL, or CSV for flat kinds) into a task, atomically and idempotently: "
            "a bad file imports nothing, and importing the same file again adds nothing.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", help="the .jsonl or .csv file")
        parser.add_argument("--name", required=True, help="task name (unique)")
        parser.add_argument("--kind", required=True, choices=sorted(KINDS))
        parser.add_argument("--language", required=True, help="MTEB-style code, e.g. eng-Latn")
        parser.add_argument("--labels", help="classification label set, comma-separated (default: gold labels)")
        parser.add_argument("--scale", help="MIN,MAX of the rating scale (sts, graded_relevance, likert)")
        parser.add_argument("--step", help="step of the rating scale")
        parser.add_argument("--axes", help="likert axes, comma-separated")
        parser.add_argument("--instructions", metavar="FILE.md", help="Markdown instructions for annotators")
        parser.add_argument("--mteb-task", dest="mteb_task_name", help="MTEB task name, e.g. STS22")
        parser.add_argument("--mteb-subset", dest="mteb_subset", help="MTEB hf_subset, e.g. default or ar")
        parser.add_argument("--dataset-revision", dest="dataset_revision", help="dataset revision (commit)")
        parser.add_argument("--format", choices=["jsonl", "csv"], help="override the format the file name implies")
        parser.add_argument("--update-gold", dest="update_gold", action="store_true",
                            help="let the file change the gold of items imported before")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["file"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        if opts["instructions"]:
            opts["instructions"] = self._read_instructions(Path(opts["instructions"]))
        try:
            options = parse_options(opts, path.name)
            with path.open("rb") as stream:
                summary = import_task(stream, path.name, options)
        except ImportFailed as failed:
            raise CommandError(f"nothing was imported:\n{failed}") from None
        for line in summary.lines():
            self.stdout.write(line)

    @staticmethod
    def _read_instructions(path: Path) -> str:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandError(f"{path}: cannot read the instructions ({exc})") from None
