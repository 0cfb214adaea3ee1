"""A human batch of the items a PPI plan asks for: drawn uniformly at random from the pool items no person has
answered yet, in the task's language, so the labelled items stay a uniform sample of the pool; or actively,
where several judges disagree most (agreement/ppi/active.py), with the draw stored so the estimate weighs it.

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

from agreement.ppi.active import DEFAULT_UNIFORM_SHARE, draw_probabilities, draw_until_new
from agreement.ppi.models import PPIDraw
from agreement.ppi.planner import DEFAULT_ASSURANCE, Plan, labels_needed
from agreement.ppi.ppi_loading import PPIInputError, judge_numbers, load_numbers, pool_items
from agreement.ppi.task_estimates import StudyNumbers, sample_for
from annotation.batches import AssignmentProblem, assign
from annotation.models import Annotator, Batch, BatchItem
from tasks_app.models import Item, Task


@dataclass(frozen=True)
class PlannedBatch:
    batch: Batch
    external_ids: list[str]
    plan: Plan | None
    seed: int
    active: bool = False


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
                     uniform_share: float = DEFAULT_UNIFORM_SHARE, created_by: Any = None) -> PlannedBatch:
    """A new batch of `n_items` (or as many as the plan for ±`target_half_width` needs) items without a human
    answer, drawn uniformly with `seed`, or, with `active_judges`, drawn with probability rising with those
    judges' spread on the item (agreement/ppi/active.py; the draw is stored for the weights); raises
    PPIInputError (nothing written) on input PPI cannot use."""
    if (n_items is None) == (target_half_width is None):
        raise PPIInputError("give either the number of items or a target half-width")
    numbers = load_numbers(task, judge_name)
    plan = None if target_half_width is None else plan_for(numbers, target_half_width, alpha, assurance)
    wanted = n_items if plan is None else plan.n_more
    assert wanted is not None
    unlabelled = [external_id for external_id, labelled in zip(numbers.items, numbers.labelled, strict=True)
                  if not labelled]
    if wanted < 1:
        raise PPIInputError("the plan needs no more labels: the target is already reached" if plan is not None
                            else "the batch needs at least one item")
    if wanted > len(unlabelled):
        raise PPIInputError(f"{wanted} items asked for, but only {len(unlabelled)} items have no human answer")
    rng = np.random.default_rng(seed)
    draw = None
    if active_judges is None:
        drawn = [unlabelled[i] for i in rng.permutation(len(unlabelled))[:wanted]]
    else:
        draw = active_draw(task, active_judges, numbers.labelled, wanted, uniform_share, rng)
        drawn = [numbers.items[row] for row in dict.fromkeys(draw["rows"]) if not numbers.labelled[row]]
    name = name or f"{task.name} · PPI +{wanted} ({'active, ' if draw else ''}seed {seed})"
    if Batch.objects.filter(task=task, name=name).exists():
        raise PPIInputError(f"task {task.name!r} already has a batch named {name!r}: give another --name or --seed")
    ids = dict(Item.objects.filter(task=task, external_id__in=drawn).values_list("external_id", "pk"))
    try:
        with transaction.atomic():
            batch = Batch.objects.create(task=task, name=name, language=task.language, overlap=overlap,
                                         created_by=created_by)
            BatchItem.objects.bulk_create(BatchItem(batch=batch, item_id=ids[external_id], position=position)
                                          for position, external_id in enumerate(drawn, start=1))
            assign(batch, annotators)
            if draw is not None:
                PPIDraw.objects.create(batch=batch, judges=list(active_judges or ()), uniform_share=uniform_share,
                                       item_ids=draw["item_ids"], probabilities=draw["probabilities"],
                                       draws=[draw["item_ids"][row] for row in draw["rows"]])
    except AssignmentProblem as problem:
        raise PPIInputError(f"{problem.field}: {problem.message}") from None
    return PlannedBatch(batch, drawn, plan, seed, draw is not None)


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
