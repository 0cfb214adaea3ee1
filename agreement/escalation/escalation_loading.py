"""The task's answers read for escalation and the alternative-annotator test, and the human batch of the escalated
items (the ORM side of agreement/escalation/; the maths is in calibration.py, plan.py and alt_test.py).

Shared by the `escalate` and `alt_test` commands and the escalation page. Answers are read in bulk, one query per
kind of answer; skipped answers do not count. Nothing here writes, except `create_escalation_batch`.
"""
from __future__ import annotations

import json
from collections import defaultdict
from typing import Any

import numpy as np
from django.db import transaction
from django.db.models import Sum

from agreement.escalation.plan import LABEL_KINDS, RATING_KINDS, EscalationProblem, Plan, escalate
from annotation.llm.models import LLMAnnotatorConfig, LLMRun
from annotation.models import Annotation, Annotator, Batch, BatchItem
from measures.escalation.alternative_annotator_test import AltTestResult, alt_test
from measures.escalation.calibration import START_COVERED
from tasks_app.models import Item, Task

MIN_ALT_TEST_ANNOTATORS = 3


def find_judges(task: Task, names: list[str]) -> list[Annotator]:
    """The LLM annotators named, in order; EscalationProblem naming the first problem of each kind found."""
    if not names:
        raise EscalationProblem("no judges given: --judges a,b,c names LLM annotators in cascade order")
    duplicated = sorted({name for name in names if names.count(name) > 1})
    if duplicated:
        raise EscalationProblem(f"judge named twice: {', '.join(duplicated)}")
    found = {a.name: a for a in Annotator.objects.filter(user__username__in=names).select_related("user")}
    unknown = [name for name in names if name not in found]
    if unknown:
        raise EscalationProblem(f"no annotator named {', '.join(map(repr, unknown))}")
    people = [name for name in names if found[name].agent != Annotator.Agent.LLM]
    if people:
        raise EscalationProblem(f"{', '.join(map(repr, people))}: a person, not an LLM annotator; only LLM "
                                "annotators can be judges")
    excluded = [name for name in names if found[name].excluded_at is not None]
    if excluded:  # their answers count in no number (docs/crowd.md, "Exclusion")
        raise EscalationProblem(f"{', '.join(map(repr, excluded))}: excluded, so its answers count in no "
                                "calibration; include it again (exclude_annotator --undo) to use it as a judge")
    with_confidence = set(Annotation.objects.counted().filter(item__task=task, annotator__in=found.values(),
                                                              skipped=False, confidence__isnull=False)
                          .values_list("annotator__user__username", flat=True).distinct())
    without = [name for name in names if name not in with_confidence]
    if without:
        raise EscalationProblem(
            f"{', '.join(map(repr, without))}: no answer with a confidence on task {task.name!r}; run the judge with "
            "log-probs or simulated annotators, or import its answers with \"confidence\" (docs/escalation.md)")
    return [found[name] for name in names]


def human_answers(task: Task) -> dict[int, list[Any]]:
    """Item id → the people's answers (skips left out)."""
    answers: dict[int, list[Any]] = defaultdict(list)
    rows = Annotation.objects.counted().filter(item__task=task, skipped=False, annotator__agent=Annotator.Agent.HUMAN)
    for item_id, value in rows.values_list("item_id", "value").iterator(chunk_size=5000):
        answers[item_id].append(value)
    return answers


def judge_answers(task: Task, judges: list[Annotator]) -> dict[str, dict[int, tuple[Any, float | None]]]:
    """Judge name → item id → (answer, confidence)."""
    names = {judge.pk: judge.name for judge in judges}
    answers: dict[str, dict[int, tuple[Any, float | None]]] = {name: {} for name in names.values()}
    rows = Annotation.objects.counted().filter(item__task=task, skipped=False, annotator__in=judges)
    for annotator_id, item_id, value, confidence in rows.values_list("annotator_id", "item_id", "value",
                                                                     "confidence").iterator(chunk_size=5000):
        answers[names[annotator_id]][item_id] = (value, confidence)
    return answers


def escalation_plan(task: Task, judge_names: list[str], alpha: float, delta: float, *,
                    n_calibration: int | None = None, tolerance: float | None = None, seed: int = 0,
                    start_covered: int = START_COVERED) -> Plan:
    """The plan for `task` (plan.escalate), with the task named and the escalated items' external ids."""
    judges = find_judges(task, judge_names)
    items = list(Item.objects.filter(task=task).order_by("position", "pk").values_list("pk", "external_id"))
    plan = escalate(task.kind, [pk for pk, _ in items], human_answers(task), judge_names,
                    judge_answers(task, judges), alpha, delta, n_calibration=n_calibration, tolerance=tolerance,
                    seed=seed, start_covered=start_covered)
    external = dict(items)
    plan.result.update({"task": task.name, "kind": task.kind,
                        "escalated_items": [external[pk] or str(pk) for pk in plan.escalated],
                        "human_labels_saved": plan.result["rest"]["n_decided"],
                        "cost": judge_costs(task, judges)})
    return plan


def final_labels(plan: Plan, task: Task) -> list[dict[str, Any]]:
    """Per item, in task order: its external id, who decides it ("people", a judge's name, or "escalated": people
    still to answer) and the label (the people's majority or mean, the judge's answer, None)."""
    external = dict(Item.objects.filter(task=task).values_list("pk", "external_id"))
    return [{"item": external[pk] or str(pk), "decided_by": who, "label": label}
            for pk, who, label in plan.final_labels]


def judge_costs(task: Task, judges: list[Annotator]) -> list[dict[str, Any]]:
    """Per judge: the requests and tokens of its runs on the task, and their cost at its prices (None: no price,
    or answers imported rather than run here)."""
    totals = {row["annotator_id"]: row for row in LLMRun.objects.filter(task=task, annotator__in=judges)
              .values("annotator_id").annotate(requests=Sum("http_requests"), prompt=Sum("prompt_tokens"),
                                               completion=Sum("completion_tokens"))}
    configs = {c.annotator_id: c for c in LLMAnnotatorConfig.objects.filter(annotator__in=judges)}
    out = []
    for judge in judges:
        row = totals.get(judge.pk, {"requests": 0, "prompt": 0, "completion": 0})
        config = configs.get(judge.pk)
        cost = config.cost(row["prompt"], row["completion"]) if config else None
        out.append({"judge": judge.name, "http_requests": row["requests"], "prompt_tokens": row["prompt"],
                    "completion_tokens": row["completion"], "cost": None if cost is None else str(cost)})
    return out


def create_escalation_batch(task: Task, item_ids: list[int], name: str, overlap: int) -> Batch:
    """A human batch of exactly the escalated items, in the task's language, with overlap k; refused (nothing
    written) when the name is taken, k < 1, or there is nothing to escalate."""
    if overlap < 1:
        raise EscalationProblem(f"--overlap must be at least 1, got {overlap}")
    if not item_ids:
        raise EscalationProblem("no item is escalated: no batch to create")
    if Batch.objects.filter(task=task, name=name).exists():
        raise EscalationProblem(f"task {task.name!r} already has a batch named {name!r}; choose another --batch name")
    with transaction.atomic():
        batch = Batch.objects.create(task=task, name=name, language=task.language, overlap=overlap)
        BatchItem.objects.bulk_create([BatchItem(batch=batch, item_id=item_id, position=position)
                                       for position, item_id in enumerate(item_ids, start=1)])
    return batch


def alt_test_for_task(task: Task, judge_name: str, epsilon: float, *, q: float = 0.05,
                      min_items: int = 30) -> AltTestResult:
    """The alternative-annotator test of one LLM annotator on the task's people (alt_test.alt_test)."""
    if not 0 < epsilon < 1 or not 0 < q < 1:
        raise EscalationProblem(f"--epsilon and --q must be strictly between 0 and 1, got {epsilon} and {q}")
    annotator = Annotator.objects.filter(user__username=judge_name).first()
    if annotator is None:
        raise EscalationProblem(f"no annotator named {judge_name!r}")
    if annotator.agent != Annotator.Agent.LLM:
        raise EscalationProblem(f"{judge_name!r}: a person, not an LLM annotator")
    if annotator.excluded_at is not None:
        raise EscalationProblem(f"{judge_name!r}: excluded, so its answers count in no test; include it again "
                                "(exclude_annotator --undo) to test it")
    if task.kind in LABEL_KINDS:
        scoring = "accuracy"
    elif task.kind in RATING_KINDS:
        scoring = "neg_rmse"  # for per-document or per-axis ratings: over all their numbers
    else:
        raise EscalationProblem(f"the alternative-annotator test works for {', '.join(LABEL_KINDS + RATING_KINDS)}; "
                                f"not {task.kind}")

    def comparable(value: Any) -> Any:
        if scoring == "accuracy":
            return _canonical(value)
        if isinstance(value, dict):
            return np.array([float(value[key]) for key in sorted(value)])
        return float(value)

    humans: dict[str, dict[int, Any]] = defaultdict(dict)
    rows = Annotation.objects.counted().filter(item__task=task, skipped=False, annotator__agent=Annotator.Agent.HUMAN)
    for name, item_id, value in rows.values_list("annotator__user__username", "item_id", "value"):
        humans[name][item_id] = comparable(value)
    if len(humans) < MIN_ALT_TEST_ANNOTATORS:
        raise EscalationProblem(f"the alternative-annotator test needs at least {MIN_ALT_TEST_ANNOTATORS} human "
                                f"annotators on the items; task {task.name!r} has {len(humans)}")
    judge = {item_id: comparable(value) for item_id, value in Annotation.objects.counted().filter(
        item__task=task, skipped=False, annotator=annotator).values_list("item_id", "value")}
    if not judge:
        raise EscalationProblem(f"{judge_name!r} has no answers on task {task.name!r}")
    return alt_test(judge, dict(humans), scoring, epsilon, q, min_instances_per_human=min_items)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)
