"""``python manage.py leaderboard``: HUME Table 1 from the imported results and this project's humans."""
from __future__ import annotations

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from agreement.results import leaderboard as lb
from agreement.results.compare import build, export_rows, leaderboard_rows


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
        rows = leaderboard_rows(build(), languages)
        if options["format"] == "csv":
            self.stdout.write(lb.table1_to_csv(rows), ending="")
        elif options["format"] == "latex":
            self.stdout.write(lb.table1_to_latex(rows, caption="Humans, models and LLM annotators "
                                                 f"({', '.join(languages)})", label="tab:leaderboard"), ending="")
        else:
            self.stdout.write(lb.to_json(export_rows(rows)))
