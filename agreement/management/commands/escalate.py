"""`python manage.py escalate TASK --judges a,b,c --alpha 0.15 --delta 0.1 [--calibration N] [--tolerance T]
[--batch NAME --overlap K] --format json|text`: LLM judges first, people where it matters (docs/escalation.md).

Calibrates each judge's confidence threshold on the task's human-labelled items ("Trust or Escalate",
arXiv 2407.18370), cascades the judges in the order given, and prints the thresholds, the coverage and the items
escalated to people. Read-only unless `--batch` names a new human batch, which is then created with exactly the
escalated items. Bad input (an unknown judge, a person as judge, a judge without confidences, too few calibration
items, α or δ outside (0, 1)) is refused with the reason, and nothing is written.
"""
from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agreement.core.task_argument import find_task
from agreement.escalation.escalation_loading import create_escalation_batch, escalation_plan, final_labels
from agreement.escalation.plan import EscalationProblem
from measures.escalation.calibration import MIN_COVERED, START_COVERED


class Command(BaseCommand):
    help = "Calibrate LLM judges' confidence thresholds on human labels and list the items to escalate to people."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("task", help="task name (or id)")
        parser.add_argument("--judges", required=True, help="LLM annotators in cascade order, cheapest first: a,b,c")
        parser.add_argument("--alpha", type=float, default=0.15, help="tolerated disagreement with people (0-1)")
        parser.add_argument("--delta", type=float, default=0.1, help="allowed failure probability of the guarantee")
        parser.add_argument("--calibration", type=int, help="calibrate on N of the human-labelled items (a seeded "
                                                            "sample); the others become the held-out check sample")
        parser.add_argument("--tolerance", type=float, help="rating kinds: the largest difference from the people's "
                                                            "mean rating that counts as agreement")
        parser.add_argument("--seed", type=int, default=0, help="seed of the calibration sample (default 0)")
        parser.add_argument("--start-covered", type=int, default=START_COVERED,
                            help="each judge's test starts at the highest threshold keeping this many of its "
                                 f"calibration items (default {START_COVERED}, at least {MIN_COVERED}); set it before "
                                 "looking at the labels (docs/escalation.md, §2)")
        parser.add_argument("--batch", help="create a human batch of this name with exactly the escalated items")
        parser.add_argument("--overlap", type=int, default=1, help="overlap k of that batch (default 1)")
        parser.add_argument("--labels", action="store_true",
                            help="JSON: add the final label of every item and who decided it (people, a judge, "
                                 "or escalated)")
        parser.add_argument("--format", choices=("json", "text"), default="json")

    def handle(self, *args: Any, **options: Any) -> None:
        task = find_task(options["task"])
        judges = [name.strip() for name in options["judges"].split(",") if name.strip()]
        try:
            plan = escalation_plan(task, judges, options["alpha"], options["delta"],
                                   n_calibration=options["calibration"], tolerance=options["tolerance"],
                                   seed=options["seed"], start_covered=options["start_covered"])
            if options["batch"]:
                batch = create_escalation_batch(task, plan.escalated, options["batch"], options["overlap"])
                plan.result["batch"] = {"id": batch.pk, "name": batch.name, "n_items": len(plan.escalated),
                                        "overlap": batch.overlap, "language": batch.language}
        except EscalationProblem as problem:
            raise CommandError(str(problem)) from None
        if options["labels"]:
            plan.result["labels"] = final_labels(plan, task)
        if options["format"] == "json":
            self.stdout.write(json.dumps(plan.result, indent=2, ensure_ascii=False))
        else:
            self.stdout.write("\n".join(text_lines(plan.result)))


def text_lines(result: dict[str, Any]) -> list[str]:
    lines = [f"{result['task']}: agreement with people ≥ {result['guaranteed_agreement']:g} on the judges' items, "
             f"with probability ≥ {1 - result['delta']:g} per judge (docs/escalation.md)"]
    for judge in result["judges"]:
        threshold = "covers nothing" if judge["threshold"] is None else f"threshold {judge['threshold']:.4f}"
        lines.append(f"  {judge['name']}: {threshold}, {judge['n_covered']} of {judge['n_calibration']} calibration "
                     f"items, decides {judge['n_decided']} others")
        if judge.get("closest"):
            lines.append(f"    {closest_text(judge['closest'], result['alpha'])}")
    calibration, rest, check = result["calibration"], result["rest"], result["check"]
    lines.append(f"calibration: {calibration['n_covered']} of {calibration['n_items']} covered "
                 f"({calibration['coverage']:.1%})")
    if check["n_items"]:
        agreement = "n/a" if check["agreement"] is None else f"{check['agreement']:.1%}"
        lines.append(f"check sample: {check['n_covered']} of {check['n_items']} decided, agreement {agreement}")
    lines.append(f"other items: {rest['n_decided']} of {rest['n_items']} decided by judges, "
                 f"{rest['n_escalated']} escalated to people")
    for cost in result["cost"]:
        price = "" if cost["cost"] is None else f", cost {cost['cost']}"
        lines.append(f"  {cost['judge']}: {cost['http_requests']} requests, {cost['prompt_tokens']} prompt and "
                     f"{cost['completion_tokens']} completion tokens{price}")
    if "batch" in result:
        lines.append(f"created batch {result['batch']['name']!r} with {result['batch']['n_items']} items")
    return lines


def closest_text(closest: dict[str, Any], alpha: float) -> str:
    """How close a judge that keeps nothing came, and how many calibration labels would let it keep items."""
    seen = (f"closest at threshold {closest['threshold']:.4f}: {closest['n_covered']} items with "
            f"{closest['n_errors']} errors, disagreement {closest['risk']:.3f}, bound {closest['risk_bound']:.3f}")
    if closest["passes_below_start"]:
        return f"{seen} ≤ α = {alpha:g}, but the test stopped at a failure above it (at its start)"
    if closest["n_calibration_needed"] is None:
        return f"{seen} > α = {alpha:g}; no number of labels would do: its disagreement there is ≥ α"
    return (f"{seen} > α = {alpha:g}; about {closest['n_calibration_needed']} calibration items for this judge, at "
            "that disagreement, would let it keep items")
