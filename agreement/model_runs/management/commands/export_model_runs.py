"""`python manage.py export_model_runs MODEL TASK [TASK ...] --out DIR`: a model's in-app runs as MTEB
TaskResult files (agreement/model_runs/model_mteb_export.py); the latest finished run per task."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.mteb_export import ExportError
from agreement.core.task_argument import find_task
from agreement.model_runs.model_arguments import find_models
from agreement.model_runs.model_mteb_export import write_run_results
from agreement.model_runs.models import ModelRun


class Command(BaseCommand):
    help = "Export a model's in-app runs as MTEB TaskResult JSON files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("model")
        parser.add_argument("tasks", nargs="+")
        parser.add_argument("--out", required=True, type=Path)

    def handle(self, *args: Any, **options: Any) -> None:
        (model,) = find_models(options["model"])
        runs = []
        for task in (find_task(t) for t in options["tasks"]):
            run = ModelRun.objects.filter(task=task, model=model, status="done").order_by("-finished_at").first()
            if run is None:
                raise CommandError(f"{model.name} has no finished run on {task.name!r} (see run_models)")
            runs.append(run)
        try:
            paths = write_run_results(runs, options["out"])
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
        for path in paths:
            self.stdout.write(str(path))
