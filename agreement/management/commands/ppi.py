"""`python manage.py ppi TASK --judge NAME [--alpha 0.05] [--target-half-width W] [--threshold T]
[--sequence-t-star 200] [--format json|csv]`: a task's judge-augmented estimates with their intervals
(prediction-powered inference).

Computes in this process with the code a worker runs (`agreement/ppi/document.py`) and prints the document; keys
and meaning in docs/ppi.md. A line on stderr says what the labels are worth. Refused input (a person as judge,
a judge that missed items, no human labels, answers off the scale) exits with the reason and changes nothing.
"""
from __future__ import annotations

import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.ppi.document import ppi_csv, ppi_document, ppi_json, worth_line
from agreement.ppi.ppi_loading import PPIInputError
from measures.ppi.sequence import DEFAULT_T_STAR


def positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(text)
    return value


def level(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise ValueError(text)
    return value


class Command(BaseCommand):
    help = "Print a task's PPI estimates (a judge on every item, people on a sample), with intervals and a plan."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--judge", required=True, help="the LLM annotator (or imported llm answers) by name")
        parser.add_argument("--alpha", type=level, default=0.05, help="1 − confidence (default 0.05: 95%%)")
        parser.add_argument("--target-half-width", type=positive, default=None,
                            help="plan how many more human labels reach ±W")
        parser.add_argument("--threshold", type=float, default=None,
                            help="graded relevance: a grade ≥ T counts as relevant (default 70%% up the scale)")
        parser.add_argument("--sequence-t-star", type=int, default=DEFAULT_T_STAR,
                            help="labels the confidence sequence is tuned for; fix it before the first look")
        parser.add_argument("--format", choices=("json", "csv"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        try:
            doc = ppi_document(task, options["judge"], alpha=options["alpha"],
                               target_half_width=options["target_half_width"], threshold=options["threshold"],
                               t_star=options["sequence_t_star"])
        except (PPIInputError, ValueError) as problem:
            raise CommandError(str(problem)) from None
        self.stderr.write(worth_line(doc))
        self.stdout.write(ppi_csv(doc) if options["format"] == "csv" else ppi_json(doc), ending="")
