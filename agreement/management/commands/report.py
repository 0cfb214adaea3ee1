"""`python manage.py report TASK [--format json|csv] [--items] [--aggregation NAME]`: print a task's agreement report.

Prints the stored report when it was computed from exactly the current answers and gold; otherwise it
computes the report here, with the very code a worker runs (so it works without a worker), and stores it.
The JSON keys are documented in docs/reports.md. `--aggregation` (majority by default; dawid-skene,
one-coin, glad, mace) combines the humans of a label kind by that annotator model before scoring them against
gold; the report says which in `aggregation` and `human.combination`.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.report_exports import report_csv, report_json
from agreement.core.reports import report_in_process
from agreement.core.scoring import check_aggregation
from agreement.core.task_argument import find_task
from agreement.model_runs.rows import model_rows
from measures.annotator_models import METHODS, UnknownAggregation

ITEM_LISTS = ("disagreement", "excluded")


class Command(BaseCommand):
    help = "Print a task's agreement report (JSON or CSV), computing it in-process when none is fresh."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--format", choices=("json", "csv"), default="json")
        parser.add_argument("--items", action="store_true",
                            help="include the item-level lists (disagreement, excluded) in the JSON")
        parser.add_argument("--aggregation", default="majority", metavar="NAME",
                            help=f"how the humans are combined before scoring against gold: {', '.join(METHODS)} "
                                 "(default majority; kinds with labels only: classification, pairwise, reranking)")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        try:
            check_aggregation(task.kind, options["aggregation"])
        except UnknownAggregation as exc:
            raise CommandError(f"task {task.name!r}: {exc}; nothing was computed") from exc
        doc, how = report_in_process(task, options["aggregation"])
        self.stderr.write(f"report of {task.name}: {how} ({doc.get('computed_in', '')}, {doc.get('computed_at', '')})")
        if options["format"] == "csv":
            self.stdout.write(report_csv(doc), ending="")
            return
        if not options["items"]:
            doc = {k: v for k, v in doc.items() if k not in ITEM_LISTS}
        doc = {**doc, "model_runs": model_rows(task.pk)}  # models run here on these items (docs/models-in-app.md)
        self.stdout.write(report_json(doc), ending="")
