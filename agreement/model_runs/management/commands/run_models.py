"""`python manage.py run_models TASK --models a,b [--wait]`: run registered models on a task's items.

Without --wait the chunks go to the Celery workers (after commit; a broker that is down is an error, never
a silent inline run). With --wait the command does the workers' job itself, with the same code, and prints
each model's scores against gold and against the humans' consensus as JSON; --no-cache (with --wait) writes
nothing to the embedding cache.
"""
from __future__ import annotations

import json
from contextlib import nullcontext
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.model_runs.backends import BackendError, device_of
from agreement.model_runs.embedding_store import writes_off
from agreement.model_runs.evaluate import UnsupportedKind
from agreement.model_runs.execution import enqueue, run_in_process, start_run
from agreement.model_runs.model_arguments import find_models
from tasks_app.models import Task


class Command(BaseCommand):
    help = "Run embedding models / classical metrics on a task's items and score them like MTEB."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--models", required=True, help="comma-separated registered model names")
        parser.add_argument("--wait", action="store_true", help="run here, in this process, and print the scores")
        parser.add_argument("--no-cache", action="store_true",
                            help="with --wait: write nothing to the embedding cache (what it holds is still read); "
                                 "the vectors go from the chunks to the scoring in memory")
        parser.add_argument("--protocol", default="mteb", choices=("mteb", "pooled"),
                            help="mteb (default): MTEB's own protocol on every kind; pooled: classification "
                                 "cross-validated on whole training folds, no undersampling, predictions pooled")

    def handle(self, *args: Any, **options: Any) -> None:
        task: Task = find_task(options["task"])
        models = find_models(options["models"])
        if options["no_cache"] and not options["wait"]:
            raise CommandError("--no-cache needs --wait: workers hand a run's vectors to its scoring through the "
                               "embedding cache")
        if options["wait"]:  # this process computes: a device it lacks is refused before any run is made
            try:
                for model in models:
                    device_of(model)
            except BackendError as exc:
                raise CommandError(str(exc)) from None
        try:
            runs = [start_run(task, model, protocol=options["protocol"]) for model in models]
        except UnsupportedKind as exc:
            raise CommandError(str(exc)) from None
        if not options["wait"]:
            for run in runs:
                n = enqueue(run)
                self.stdout.write(f"{run.model.name}: run {run.pk} {run.status}, {n} chunk(s) queued")
            return
        out = {}
        for run in runs:
            with writes_off() if options["no_cache"] else nullcontext():
                run = run_in_process(run)
            if run.status != run.Status.DONE:
                raise CommandError(f"{run.model.name} on {task.name} failed: {run.error}")
            out[run.model.name] = {"protocol": run.protocol, "gold": run.scores.get("gold"),
                                   "humans": run.scores.get("humans"),
                                   "texts_encoded": run.texts_encoded, "device": run.device}
        self.stdout.write(json.dumps({"task": task.name, "kind": task.kind, "models": out}, indent=2))
