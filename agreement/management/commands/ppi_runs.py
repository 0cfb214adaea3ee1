"""`python manage.py ppi_runs POOL_TASK --judge NAME [--k 10] [--threshold T] [--alpha 0.05]
[--format json|csv]`: each pooled retrieval run's relevance@k and P@k with PPI intervals, from an LLM judge
on every pooled pair and people on a uniform sample (agreement/ppi/ranking_estimates.py, docs/ppi.md)."""
from __future__ import annotations

import csv
import io
import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.ppi.ppi_loading import PPIInputError
from agreement.ppi.ranking_estimates import run_estimates
from hume.lib.csv_safety import safe_row

COLUMNS = ("run", "k", "metric", "estimate", "ci_low", "ci_high", "classical_low", "classical_high", "lambda", "n",
           "n_effective", "n_pairs", "reason")


class Command(BaseCommand):
    help = "Each pooled retrieval run's relevance@k and P@k with PPI intervals (a judge on every pair, people on some)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="the pool's task name (or id)")
        parser.add_argument("--judge", required=True)
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--threshold", type=float, default=None, help="P@k: relevant means a grade ≥ T")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        try:
            doc = run_estimates(task, options["judge"], k=options["k"], alpha=options["alpha"],
                                threshold=options["threshold"])
        except (PPIInputError, ValueError) as problem:
            raise CommandError(str(problem)) from None
        if options["format"] == "json":
            self.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False))
            return
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(COLUMNS)
        for run in doc["runs"]:
            for metric in run["metrics"]:
                values = {**metric, "run": run["run"], "k": run["k"], "n_pairs": run["n_pairs"]}
                writer.writerow(safe_row("" if values.get(c) is None else values.get(c) for c in COLUMNS))
        self.stdout.write(out.getvalue(), ending="")
