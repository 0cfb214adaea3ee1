"""`python manage.py alt_test TASK --judge NAME [--epsilon 0.2] [--q 0.05] [--min-items 30] --format json|text`:
may this LLM judge replace a human annotator? The alternative-annotator test ("The Alternative Annotator Test for
LLM-as-a-Judge", arXiv 2501.10970; docs/escalation.md): leave each annotator out, compare the judge's and the
annotator's alignment with the others, one-sided paired tests with the margin ε, Benjamini–Yekutieli across
annotators; the judge passes when it wins against at least half of them (ω ≥ 0.5). Needs at least 3 human
annotators. Read-only.
"""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.escalation.escalation_loading import alt_test_for_task
from agreement.escalation.plan import EscalationProblem


class Command(BaseCommand):
    help = "The alternative-annotator test of an LLM annotator against the task's human annotators."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--judge", required=True, help="the LLM annotator")
        parser.add_argument("--epsilon", type=float, default=0.2,
                            help="cost-benefit margin: 0.2 expert annotators, 0.15 skilled, 0.1 crowd workers")
        parser.add_argument("--q", type=float, default=0.05, help="false discovery rate (default 0.05)")
        parser.add_argument("--min-items", type=int, default=30, help="items an annotator needs to be tested")
        parser.add_argument("--format", choices=("json", "text"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        try:
            result = alt_test_for_task(task, options["judge"], options["epsilon"], q=options["q"],
                                       min_items=options["min_items"])
        except EscalationProblem as problem:
            raise CommandError(str(problem)) from None
        doc = {"task": task.name, "judge": options["judge"], "epsilon": result.epsilon, "q": result.q,
               "n_items": result.n_items, "winning_rate": result.winning_rate,
               "advantage_probability": result.advantage_probability, "passed": result.passed,
               "annotators": [{"annotator": r.annotator, "n_items": r.n_items,
                               "advantage_probability": r.advantage_probability, "p_value": r.p_value,
                               "judge_wins": r.judge_wins} for r in result.annotators],
               "left_out": result.left_out}
        if options["format"] == "json":
            self.stdout.write(json.dumps(doc, indent=2, ensure_ascii=False))
            return
        if result.winning_rate is None:
            self.stdout.write(f"no annotator has {options['min_items']} items shared with the judge: nothing to test")
            return
        self.stdout.write(f"{options['judge']} on {task.name}: {'PASSED' if result.passed else 'FAILED'} "
                          f"(winning rate ω = {result.winning_rate:.2f}, advantage probability "
                          f"ρ = {result.advantage_probability:.2f}, ε = {result.epsilon:g})")
