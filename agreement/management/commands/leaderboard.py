"""``python manage.py leaderboard``: HUME Table 1 from the imported results and this project's humans."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.reports import report_in_process
from agreement.results import leaderboard as lb
from agreement.results.compare import Comparison, build, export_rows, leaderboard_rows
from tasks_app.models import Task


class Command(BaseCommand):
    help = (
        "Print the leaderboard in the shape of HUME Table 1: models, humans and LLM annotators ranked on the "
        "unweighted mean main score over task-language subsets. JSON scores are on MTEB's 0-1 scale; "
        "CSV and LaTeX print them x100 like the paper."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--languages", default=",".join(lb.HUME_LANGUAGES),
                            help="Comma-separated language codes (default: HUME's five)")
        parser.add_argument("--format", choices=("json", "csv", "latex"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        languages = [code.strip() for code in options["languages"].split(",") if code.strip()]
        if not languages:
            raise CommandError("--languages needs at least one language code, e.g. eng-Latn")
        rows = leaderboard_rows(self.comparison(), languages)
        if options["format"] == "csv":
            self.stdout.write(lb.table1_to_csv(rows), ending="")
        elif options["format"] == "latex":
            self.stdout.write(lb.table1_to_latex(rows, caption="Humans, models and LLM annotators "
                                                 f"({', '.join(languages)})", label="tab:leaderboard"), ending="")
        else:
            self.stdout.write(lb.to_json(export_rows(rows)))

    def comparison(self) -> Comparison:
        """The comparison, after computing here any mapped task's missing report with the worker's code
        (as the `report` command does; pages and the API only queue it)."""
        comparison = build()
        if not comparison.pending:
            return comparison
        for task in Task.objects.filter(pk__in=[pending.task_id for pending in comparison.pending]):
            _, how = report_in_process(task)
            self.stderr.write(f"{task.name}: report {how}")
        return build()
