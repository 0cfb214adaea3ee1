"""A human batch of the items a PPI plan asks for: drawn uniformly at random from the pool items no person has
answered yet, in the task's language, so the labelled items stay a uniform sample of the pool; or actively,
where several judges disagree most, or where one judge's own confidence predicts it errs (`by_confidence`,
measures/ppi/active.py), with the draw stored so the estimate weighs it.

The draw is a seeded permutation, and the batch's positions follow it; the assignment engine hands items out
in position order (docs/batches.md), so a batch only partly labelled is still a uniform draw (its first k
items). Everything is checked first (the judge, its coverage, the answers' scale, the plan), then the batch is
written in one transaction: a refused request writes nothing.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import transaction

from agreement.ppi.models import PPIDraw
from agreement.ppi.ppi_loading import PPIInputError, find_judge, judge_numbers, load_numbers, pool_items
from annotation.core.batches import AssignmentProblem, assign
from annotation.models import Annotation, Annotator, Batch, BatchItem
from measures.ppi.active import (
    CONFIDENCE_UNIFORM_SHARE,
    DEFAULT_UNIFORM_SHARE,
    confidence_probabilities,
    draw_probabilities,
    draw_until_new,
)
from measures.ppi.planner import DEFAULT_ASSURANCE, ActivePlan, Plan, active_labels_needed, labels_needed
from measures.ppi.task_estimates import StudyNumbers, sample_for
from tasks_app.models import Item, Task


@dataclass(frozen=True)
class PlannedBatch:
    batch: Batch
    external_ids: list[str]
    plan: Plan | None
    seed: int
    active: bool = False
    design: str = ""  # how the draw was made, in words (confidence-driven: whether the confidence was used)


def plan_for(numbers: StudyNumbers, target_half_width: float, alpha: float, assurance: float) -> Plan:
    """The plan of the estimand needing most labels (every estimand reaches the target), or the refusal."""
    everything = np.ones(len(numbers.items), dtype=bool)
    plans = [labels_needed(sample_for(numbers, column, everything), target_half_width, alpha, assurance)
             for column in range(len(numbers.estimands))]
    for estimand, plan in zip(numbers.estimands, plans, strict=True):
        if plan.n_more is None:
            raise PPIInputError(f"{estimand}: {plan.reason}")
    return max(plans, key=lambda p: p.n_more or 0)


def create_ppi_batch(task: Task, judge_name: str, *, n_items: int | None = None,
                     target_half_width: float | None = None, alpha: float = 0.05,
                     assurance: float = DEFAULT_ASSURANCE, seed: int = 0, name: str | None = None,
                     overlap: int = 1, annotators: Iterable[Annotator] = (),
                     active_judges: Sequence[str] | None = None,
                     uniform_share: float | None = None, by_confidence: bool = False,
                     created_by: Any = None) -> PlannedBatch:
    """A new batch of `n_items` (or as many as the plan for ±`target_half_width` needs) items without a human
    answer, drawn uniformly with `seed`, or, with `active_judges`, drawn with probability rising with those
    judges' spread on the item, or, `by_confidence`, rising with the judge's error predicted from its own
    confidence, the plan then made for that draw (measures/ppi/active.py; the draw is stored for the weights);
    raises PPIInputError (nothing written) on input PPI cannot use."""
    if (n_items is None) == (target_half_width is None):
        raise PPIInputError("give either the number of items or a target half-width")
    if by_confidence and active_judges is not None:
        raise PPIInputError("draw either by several judges' spread (--active) or by the judge's confidence "
                            "(--by-confidence), not both")
    if uniform_share is None:
        uniform_share = CONFIDENCE_UNIFORM_SHARE if by_confidence else DEFAULT_UNIFORM_SHARE
    numbers = load_numbers(task, judge_name)
    confidence_draw = confidence_design(task, judge_name, numbers, uniform_share) if by_confidence else None
    if target_half_width is None:
        plan: Plan | None = None
    elif confidence_draw is not None:
        plan = confidence_plan_for(numbers, confidence_draw[0], target_half_width, alpha, assurance)
    else:
        plan = plan_for(numbers, target_half_width, alpha, assurance)
    wanted = n_items if plan is None else plan.n_more
    assert wanted is not None
    unlabelled = [external_id for external_id, labelled in zip(numbers.items, numbers.labelled, strict=True)
                  if not labelled]
    if wanted < 1 and isinstance(plan, ActivePlan):
        raise PPIInputError(f"the plan for a draw by confidence needs no more labels: weighed as an active draw "
                            f"(the judge's mean over all items known), today's labels already give "
                            f"±{plan.half_width_now:.4g}")
    if wanted < 1:
        raise PPIInputError("the plan needs no more labels: the target is already reached" if plan is not None
                            else "the batch needs at least one item")
    if wanted > len(unlabelled):
        raise PPIInputError(f"{wanted} items asked for, but only {len(unlabelled)} items have no human answer")
    rng = np.random.default_rng(seed)
    draw = None
    design = "uniform, from the items without a human answer"
    if confidence_draw is not None:
        q, design = confidence_draw
        draw = {"item_ids": [row[0] for row in pool_items(task)], "probabilities": q.tolist(),
                "rows": draw_until_new(q, numbers.labelled, wanted, rng), "judges": [judge_name],
                "uniform_share": uniform_share if design.startswith("by confidence") else 1.0}
        drawn = [numbers.items[row] for row in dict.fromkeys(draw["rows"]) if not numbers.labelled[row]]
    elif active_judges is not None:
        draw = active_draw(task, active_judges, numbers.labelled, wanted, uniform_share, rng)
        draw.update(judges=list(active_judges), uniform_share=uniform_share)
        design = "active: with probability rising with the judges' spread, weights stored"
        drawn = [numbers.items[row] for row in dict.fromkeys(draw["rows"]) if not numbers.labelled[row]]
    else:
        drawn = [unlabelled[i] for i in rng.permutation(len(unlabelled))[:wanted]]
    how = "by confidence, " if confidence_draw is not None else "active, " if draw is not None else ""
    name = name or f"{task.name} · PPI +{wanted} ({how}seed {seed})"
    if Batch.objects.filter(task=task, name=name).exists():
        raise PPIInputError(f"task {task.name!r} already has a batch named {name!r}: give another --name or --seed")
    ids = dict(Item.objects.filter(task=task, external_id__in=drawn).values_list("external_id", "pk"))
    try:
        with transaction.atomic():
            batch = write_batch(task, name, [ids[external_id] for external_id in drawn], overlap=overlap,
                                annotators=annotators, created_by=created_by)
            if draw is not None:
                PPIDraw.objects.create(batch=batch, judges=draw["judges"], uniform_share=draw["uniform_share"],
                                       item_ids=draw["item_ids"], probabilities=draw["probabilities"],
                                       draws=[draw["item_ids"][row] for row in draw["rows"]])
    except AssignmentProblem as problem:
        raise PPIInputError(f"{problem.field}: {problem.message}") from None
    return PlannedBatch(batch, drawn, plan, seed, draw is not None, design)


def write_batch(task: Task, name: str, item_ids: Sequence[int], *, overlap: int = 1,
                annotators: Iterable[Annotator] = (), created_by: Any = None) -> Batch:
    """A batch of the task's items `item_ids`, handed out in that order (positions 1, 2, …), assigned to
    `annotators`; raises AssignmentProblem for one without the task's language. Call it inside a transaction."""
    batch = Batch.objects.create(task=task, name=name, language=task.language, overlap=overlap,
                                 created_by=created_by)
    BatchItem.objects.bulk_create(BatchItem(batch=batch, item_id=item_id, position=position)
                                  for position, item_id in enumerate(item_ids, start=1))
    assign(batch, annotators)
    return batch


def active_draw(task: Task, judges: Sequence[str], labelled: np.ndarray, wanted: int, uniform_share: float,
                rng: np.random.Generator) -> dict[str, Any]:
    """Draws with probability rising with the judges' spread (their standard deviation per item, averaged over
    the estimands) until `wanted` new items are in; refuses fewer than two judges."""
    if len(set(judges)) < 2:
        raise PPIInputError("active sampling needs at least two judges: their disagreement on an item is its "
                            "uncertainty")
    spread = np.std(np.stack([judge_numbers(task, name) for name in judges]), axis=0).mean(axis=1)
    q = draw_probabilities(spread, uniform_share)
    return {"item_ids": [row[0] for row in pool_items(task)], "probabilities": q.tolist(),
            "rows": draw_until_new(q, labelled, wanted, rng)}


def judge_confidences(task: Task, judge_name: str) -> np.ndarray:
    """The judge's confidence on every pool item, in pool order (NaN where its answer carries none)."""
    judge = find_judge(task, judge_name)
    stated = dict(Annotation.objects.filter(item__task=task, annotator=judge, skipped=False,
                                            confidence__isnull=False).values_list("item_id", "confidence"))
    return np.array([stated.get(row[0], np.nan) for row in pool_items(task)], dtype=float)


def confidence_design(task: Task, judge_name: str, numbers: StudyNumbers,
                      uniform_share: float) -> tuple[np.ndarray, str]:
    """(q, how): draw probabilities from the judge's confidence, its squared error (averaged over the estimands)
    regressed on the confidence of the labelled items that carry one; refuses a judge without confidences."""
    confidence = judge_confidences(task, judge_name)
    if not np.isfinite(confidence).any():
        raise PPIInputError(f"judge {judge_name!r} gave no confidence on task {task.name!r}: run it with log-probs "
                            "or simulated annotators, or import its answers with \"confidence\" (docs/escalation.md)")
    fit = numbers.labelled & np.isfinite(confidence)
    squared_error = np.mean((numbers.human[fit] - numbers.judge[fit]) ** 2, axis=1)
    try:
        q, how = confidence_probabilities(confidence[fit], squared_error, confidence, uniform_share)
    except ValueError as problem:
        raise PPIInputError(f"--by-confidence: {problem}; label a uniform batch first (ppi_batch --items N)") from None
    missing = int((~np.isfinite(confidence)).sum())
    if missing:
        how += f"; {missing} item(s) without a confidence get the labelled items' mean squared error"
    return q, how


def confidence_plan_for(numbers: StudyNumbers, q: np.ndarray, target_half_width: float, alpha: float,
                        assurance: float) -> ActivePlan:
    """The plan for draws from q of the estimand needing most (measures/ppi/planner.py `active_labels_needed`),
    from the labelled draws so far (the uniform labels, or the pooled active draws with their weights)."""
    labelled = numbers.labelled
    if numbers.draw_rows is None:
        rows, weights = np.flatnonzero(labelled), np.ones(int(labelled.sum()))
    else:
        assert numbers.draw_weights is not None
        rows, weights = numbers.draw_rows, numbers.draw_weights
    plans = [active_labels_needed(numbers.human[rows, column], numbers.judge[rows, column], weights, q[rows],
                                  q[~labelled], len(numbers.items), int(labelled.sum()), target_half_width,
                                  alpha, assurance)
             for column in range(len(numbers.estimands))]
    for estimand, plan in zip(numbers.estimands, plans, strict=True):
        if plan.n_more is None:
            raise PPIInputError(f"{estimand}: {plan.reason}")
    return max(plans, key=lambda p: p.n_more or 0)
