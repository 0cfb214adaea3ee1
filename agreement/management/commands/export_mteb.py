"""`python manage.py export_mteb TASK [TASK ...] --out DIR [--model-name ORG/NAME] [--revision REV]`.

Writes the human results of the given tasks as MTEB TaskResult files, `DIR/<org__model>/<revision>/
<TaskName>.json` plus `model_meta.json`, so they load next to model results (agreement/core/mteb_export.py).
Each task's report is the stored one when fresh, else computed in-process like `report` does.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.mteb_export import DEFAULT_MODEL_NAME, ExportError, write_results
from agreement.core.reports import report_in_process
from agreement.core.task_argument import find_task


class Command(BaseCommand):
    help = "Export tasks' human results as MTEB TaskResult JSON files (one file per MTEB task)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tasks", nargs="+", help="task names (or ids)")
        parser.add_argument("--out", required=True, type=Path, help="results folder to write into")
        parser.add_argument("--model-name", default=DEFAULT_MODEL_NAME, help=f"org/name (default {DEFAULT_MODEL_NAME})")
        parser.add_argument("--revision", default=None, help="revision folder (default: today as YYYY_MM_DD)")

    def handle(self, *args: Any, **options: Any) -> None:
        tasks = [find_task(name) for name in options["tasks"]]
        reports = [(task, report_in_process(task)[0]) for task in tasks]
        try:
            paths = write_results(reports, options["out"], model_name=options["model_name"],
                                  revision=options["revision"])
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
        for path in paths:
            self.stdout.write(str(path))
