"""python manage.py sample_task NAME --size N --seed S: mark a deterministic (stratified) sample of a task."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from tasks_app.models import Task
from tasks_app.sampling import SamplingError, clear_sample, sample_task


class Command(BaseCommand):
    help = ("Choose the items annotators will see: the same seed picks the same items on any database; "
            "classification and pairwise samples keep the gold label proportions.")

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("name", help="task name")
        parser.add_argument("--size", type=int, help="number of items (HUME used 20–50 per task)")
        parser.add_argument("--seed", type=int, help="random seed (an integer); record it for reproducibility")
        parser.add_argument("--clear", action="store_true", help="remove the sample: all items form the pool")

    def handle(self, *args: Any, **opts: Any) -> None:
        task = Task.objects.filter(name=opts["name"]).first()
        if task is None:
            raise CommandError(f"no task named {opts['name']!r}")
        if opts["clear"]:
            clear_sample(task)
            self.stdout.write(f"cleared the sample of task {task.name!r}: all items form the pool")
            return
        if opts["size"] is None or opts["seed"] is None:
            raise CommandError("give --size N and --seed S (or --clear)")
        try:
            result = sample_task(task, opts["size"], opts["seed"])
        except SamplingError as exc:
            raise CommandError(str(exc)) from None
        for line in result.lines():
            self.stdout.write(line)
        if task.batches.exists():  # reverse relation only: tasks_app does not import annotation
            self.stdout.write("warning: the task already has batches, drawn from the previous pool; check them")
