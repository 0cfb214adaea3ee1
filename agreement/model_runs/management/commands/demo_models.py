"""`python manage.py demo_models [--wait]`: the demo's model rows — the shipped all-MiniLM-L6-v2 and SAGE's
five classical metrics, registered (idempotently) and run on every task they can score.

Without --wait the runs go to the Celery workers (scripts/run starts one); with --wait they run here.
"""
from __future__ import annotations

import io
from typing import Any

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandParser

from agreement.model_runs.evaluate import UnsupportedKind, check_supported
from agreement.model_runs.execution import enqueue, run_in_process, start_run
from agreement.model_runs.models import CLASSICAL_METRICS, EmbeddingModel
from agreement.model_runs.shipped import MINILM_NAME
from tasks_app.models import Task


class Command(BaseCommand):
    help = "Register MiniLM and the classical metrics and run them on every task (the demo's model rows)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--wait", action="store_true", help="run here instead of queueing for the workers")
        parser.add_argument("--tasks", help="comma-separated task names (default: every task)")

    def handle(self, *args: Any, **options: Any) -> None:
        quiet = io.StringIO()
        call_command("add_model", MINILM_NAME, "--backend", "sentence-transformers", "--shipped", stdout=quiet)
        for metric in CLASSICAL_METRICS:
            call_command("add_model", metric, "--backend", "classical", "--metric", metric, stdout=quiet)
        names = [MINILM_NAME, *CLASSICAL_METRICS]
        models = [EmbeddingModel.objects.get(name=n) for n in names]
        tasks = Task.objects.all()
        if options["tasks"]:
            tasks = tasks.filter(name__in=[t.strip() for t in options["tasks"].split(",")])
        for task in tasks:
            for model in models:
                try:
                    check_supported(task.kind, model)
                except UnsupportedKind:
                    continue
                run = start_run(task, model)
                if options["wait"]:
                    run = run_in_process(run)
                    main = (run.scores or {}).get("gold", {}) or {}
                    self.stdout.write(f"{task.name:32} {model.name:18} {run.status:8} "
                                      f"{main.get('main_metric', '')} {main.get('main_score')}")
                else:
                    enqueue(run)
        if not options["wait"]:
            self.stdout.write(f"model runs queued for {tasks.count()} task(s); see each report page")
