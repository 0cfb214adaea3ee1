"""What a campaign's start and reviews read: the task's scale and estimand, the judge's number on every pool item,
the items people labelled, and the engine's spec (measures/campaign/engine.py). Reading changes nothing."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from agreement.ppi.estimands import Scale, estimand_bounds, estimand_names
from agreement.ppi.ppi_loading import judge_numbers, pool_items, task_scale
from annotation.models import Annotation, Annotator
from measures.campaign.engine import CampaignSpec
from tasks_app.models import Task


class CampaignError(ValueError):
    """A campaign that cannot be started or run as asked: the message names the problem; nothing was written."""


@dataclass(frozen=True)
class Pool:
    """The task's pool items in task order: their ids, payloads, and the judge's number on each for the estimand."""

    item_ids: list[int]
    payloads: dict[int, dict[str, Any]]
    judge: np.ndarray
    scale: Scale
    estimand: str
    column: int
    bounds: tuple[float, float]

    def row_of(self) -> dict[int, int]:
        return {pk: row for row, pk in enumerate(self.item_ids)}


def estimand_column(scale: Scale, estimand: str | None) -> tuple[str, int]:
    """(estimand, its column): the kind's default (its first estimand) when none is given."""
    names = estimand_names(scale)
    if estimand is None:
        return names[0], 0
    if estimand not in names:
        raise CampaignError(f"estimand: {estimand!r} is not one of this task's estimands ({', '.join(names)})")
    return estimand, names.index(estimand)


def read_pool(task: Task, judge_name: str, estimand: str | None) -> tuple[str, Pool]:
    """The pool and the judge's numbers; raises PPIInputError (a person as judge, a judge that missed items,
    answers off the scale, a kind without estimands) or CampaignError (an unknown estimand)."""
    scale = task_scale(task)
    name, column = estimand_column(scale, estimand)
    judge = judge_numbers(task, judge_name)[:, column]
    items = pool_items(task)
    return name, Pool([row[0] for row in items], {row[0]: row[2] for row in items}, judge, scale, name, column,
                      tuple(estimand_bounds(scale)[column]))


def spec_for(bounds: tuple[float, float], target_half_width: float, level: float, budget_labels: int | None,
             overlap: int, sampling: str) -> CampaignSpec:
    return CampaignSpec(target_half_width=target_half_width, bounds=bounds, alpha=1 - level,
                        budget_labels=budget_labels, overlap=overlap, sampling=sampling)


def labelled_by_people(task: Task) -> set[int]:
    """Items any person answered (a counted human answer, skips included): never drawn into a campaign batch."""
    return set(Annotation.objects.counted().filter(item__task=task, annotator__agent=Annotator.Agent.HUMAN)
               .values_list("item_id", flat=True))
