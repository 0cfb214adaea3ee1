"""`python manage.py ppi_batch TASK --judge NAME (--target-half-width W | --items N) [--alpha 0.05] [--seed S]
[--name NAME] [--overlap K] [--annotators a,b] [--no-assurance] [--active J1,J2 | --by-confidence]
[--uniform-share τ]`: a human batch of exactly the items a PPI plan needs, drawn uniformly at random from the
items no person has answered, or actively where judges disagree, or where the judge's own confidence predicts it
errs, planned for that draw (agreement/ppi/human_batch.py).

Prints a JSON summary: the batch, its items in draw order and the plan. Refused input writes nothing.
"""
from __future__ import annotations

import json
import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.ppi.human_batch import create_ppi_batch
from agreement.ppi.ppi_loading import PPIInputError
from annotation.models import Annotator
from measures.ppi.active import CONFIDENCE_UNIFORM_SHARE, DEFAULT_UNIFORM_SHARE
from measures.ppi.planner import DEFAULT_ASSURANCE


def positive(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or value <= 0:
        raise ValueError(text)
    return value


def annotators_named(names: str) -> list[Annotator]:
    wanted = [n.strip() for n in names.split(",") if n.strip()]
    found = {a.name: a for a in Annotator.objects.filter(user__username__in=wanted).select_related("user")}
    missing = [n for n in wanted if n not in found]
    if missing:
        raise CommandError(f"--annotators: no annotator named {', '.join(missing)}")
    return [found[n] for n in wanted]


class Command(BaseCommand):
    help = "Create a human batch of the items a PPI plan needs (uniform draw from the unlabelled items)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--judge", required=True, help="the LLM annotator whose answers cover every item")
        size = parser.add_mutually_exclusive_group(required=True)
        size.add_argument("--target-half-width", type=positive, help="as many items as the plan for ±W needs")
        size.add_argument("--items", type=int, help="exactly N items")
        parser.add_argument("--alpha", type=float, default=0.05)
        parser.add_argument("--no-assurance", action="store_true",
                            help="plan on the projection alone (reaches W about half the time)")
        parser.add_argument("--seed", type=int, default=0, help="seed of the uniform draw")
        parser.add_argument("--name", help="batch name; default 'TASK · PPI +N (seed S)'")
        parser.add_argument("--overlap", type=int, default=1, help="people per item (default 1)")
        parser.add_argument("--annotators", default="", help="comma-separated user names to assign")
        design = parser.add_mutually_exclusive_group()
        design.add_argument("--active", default="", metavar="JUDGE,JUDGE",
                            help="draw actively: more often where these judges disagree (two or more)")
        design.add_argument("--by-confidence", action="store_true",
                            help="draw more often where the judge's own confidence predicts an error (the judge's "
                                 "answers must carry a confidence); the plan is made for that draw")
        parser.add_argument("--uniform-share", type=float, default=None,
                            help="active draws: the share of the probability spread uniformly (bounds weights by "
                                 f"1/τ; default {DEFAULT_UNIFORM_SHARE}, by confidence {CONFIDENCE_UNIFORM_SHARE})")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        if options["overlap"] < 1:
            raise CommandError("--overlap: k must be at least 1")
        try:
            made = create_ppi_batch(
                task, options["judge"], n_items=options["items"], target_half_width=options["target_half_width"],
                alpha=options["alpha"], assurance=0.0 if options["no_assurance"] else DEFAULT_ASSURANCE,
                seed=options["seed"], name=options["name"], overlap=options["overlap"],
                annotators=annotators_named(options["annotators"]),
                active_judges=[n.strip() for n in options["active"].split(",") if n.strip()] or None,
                uniform_share=options["uniform_share"], by_confidence=options["by_confidence"])
        except (PPIInputError, ValueError) as problem:  # ValueError: an alpha or uniform share out of range
            raise CommandError(str(problem)) from None
        summary = {"batch_id": made.batch.pk, "batch": made.batch.name, "language": made.batch.language,
                   "overlap": made.batch.overlap, "n_items": len(made.external_ids), "seed": made.seed,
                   "draw": made.design, "items": made.external_ids,
                   "plan": None if made.plan is None else made.plan.as_dict()}
        self.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False))
