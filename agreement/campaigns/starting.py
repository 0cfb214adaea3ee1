"""Starting a campaign (what the `campaign start` command and the API share): every input is checked first and a
refusal names the problem and writes nothing; then the campaign, its start plan and its first batch are written
in one transaction. A judge that has not labelled every item is run first (judge_runs.py): the campaign is
written `waiting for the judge`, and its plan and first batch come when the run finishes (`plan_after_the_judge`,
from the review job); the checks that need the judge's numbers wait for them too (docs/campaigns.md)."""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict
from decimal import Decimal
from typing import Any

import numpy as np
from django.db import transaction

from agreement.campaigns.campaign_batches import draw_next_batch
from agreement.campaigns.campaign_numbers import (
    CampaignError,
    estimand_column,
    labelled_by_people,
    read_pool,
    spec_for,
)
from agreement.campaigns.judge_runs import start_judge_run, why_not_runnable
from agreement.campaigns.models import Campaign
from agreement.campaigns.review_queue import ask_review
from agreement.campaigns.study_links import StudyLinkWanted, check_wanted
from agreement.ppi.estimands import estimand_bounds
from agreement.ppi.ppi_loading import PPIInputError, find_judge, task_scale
from annotation.core.batches import speakers_of
from annotation.models import Annotator, AnnotatorLanguage
from measures.campaign import engine
from tasks_app.models import Item, Task

RESERVED_NAMES = frozenset({"start"})  # paths of agreement/api_urls.py beside a campaign's name


def find_people(task: Task, names: Sequence[str] | None) -> list[Annotator]:
    """The named people (each a human annotator with the task's language), or every active speaker of it."""
    if names is None:
        people = speakers_of(task.language)
        if not people:
            raise CampaignError(f"people: no active human annotator lists the task's language {task.language}; "
                                "add one with that language or name the annotators")
        return people
    found = {a.name: a for a in Annotator.objects.select_related("user").filter(user__username__in=names)}
    unknown = [n for n in names if n not in found]
    if unknown:
        raise CampaignError(f"annotators: no annotator named {', '.join(map(repr, unknown))}")
    machines = [n for n in names if found[n].agent != Annotator.Agent.HUMAN]
    if machines:
        raise CampaignError(f"annotators: {', '.join(map(repr, machines))} are not people (LLM annotators)")
    speakers = set(AnnotatorLanguage.objects.filter(annotator__in=found.values(), language=task.language)
                   .values_list("annotator__user__username", flat=True))
    missing = [n for n in names if n not in speakers]
    if missing:
        raise CampaignError(f"annotators: {', '.join(map(repr, missing))} do(es) not list the task's language "
                            f"{task.language}")
    return [found[n] for n in dict.fromkeys(names)]


def start_campaign(name: str, task: Task | str, judge_name: str, target_half_width: float, *,
                   estimand: str | None = None, level: float = 0.95, budget_labels: int | None = None,
                   price_per_label: Decimal | None = None, annotators: Sequence[str] | None = None,
                   overlap: int = 1, sampling: str = "uniform", seed: int = 0, created_by: Any = None,
                   study_link: StudyLinkWanted | None = None) -> Campaign:
    """Plan the campaign from the judge alone (measures/campaign/engine.py `plan_start`) and hand its first
    batch to the people (named, or a crowd study link made or taken with it, `study_link`: study_links.py); when
    the judge has not labelled every item, start its run and wait for it (`waiting for the judge`). Raises
    CampaignError naming the problem (nothing written)."""
    task = find_task(task)
    check_name(name)
    if not 0 < level < 1:
        raise CampaignError(f"level: must be between 0 and 1 (0.95 for 95%), got {level!r}")
    if sampling == Campaign.Sampling.CONFIDENCE:
        raise CampaignError("sampling: by the judge's confidence is not built for campaigns yet: the anytime-valid "
                            "sequence a campaign stops by holds only for uniformly drawn labels (docs/campaigns.md, "
                            "\"What is not built yet\")")
    try:
        judge = find_judge(task, judge_name)
    except PPIInputError as problem:
        raise CampaignError(f"judge: {problem}") from None
    try:
        estimand = estimand_column(task_scale(task), estimand)[0]
    except PPIInputError as problem:
        raise CampaignError(str(problem)) from None
    unlabelled = judge_has_not_labelled(task, judge_name, estimand)
    if unlabelled:
        why_not = why_not_runnable(judge)
        if why_not:
            raise CampaignError(f"judge: {unlabelled}, and it cannot be run: {why_not}")
    if study_link is not None and annotators is not None:
        raise CampaignError("annotators: a campaign's people are either named annotators or a study link, not both")
    if study_link is not None:
        check_wanted(task, study_link)
    people = [] if study_link is not None else find_people(task, annotators)
    spec = spec_of(task, estimand, target_half_width, level, budget_labels, overlap, sampling)
    fields = dict(name=name, task=task, judge=judge, estimand=estimand, target_half_width=target_half_width,
                  level=level, budget_labels=budget_labels, price_per_label=price_per_label, overlap=overlap,
                  sampling=sampling, seed=seed, created_by=created_by,
                  study_settings={} if study_link is None else asdict(study_link))
    if unlabelled:
        check_budget_pays_a_first_batch(task, spec)
        with transaction.atomic():
            campaign = Campaign.objects.create(**fields, state=Campaign.State.WAITING_FOR_THE_JUDGE)
            campaign.people.set(people)
            campaign.judge_run = start_judge_run(judge, task, created_by)
            campaign.save(update_fields=["judge_run"])
            # its own review after the commit: a joined run that finished before it commits sends no signal it sees
            ask_review(campaign.pk, 0)
        return campaign
    plan = plan_from_the_judge(task, judge_name, estimand, spec)
    with transaction.atomic():
        campaign = Campaign.objects.create(**fields)
        campaign.people.set(people)
        hand_out_first_batch(campaign, plan)
    return campaign


def find_task(task: Task | str) -> Task:
    if isinstance(task, Task):
        return task
    found = Task.objects.filter(name=task).first()
    if found is None:
        raise CampaignError(f"task: no task named {task!r}")
    return found


def check_name(name: str) -> None:
    if not name.strip():
        raise CampaignError("name: a campaign needs a name")
    if name in RESERVED_NAMES or "/" in name:
        raise CampaignError(f"name: {name!r} cannot name a campaign (its API address would be "
                            f"/api/v1/campaigns/{name}/, which means something else); choose another name")
    if Campaign.objects.filter(name=name).exists():
        raise CampaignError(f"name: a campaign named {name!r} exists already")


def judge_has_not_labelled(task: Task, judge_name: str, estimand: str) -> str:
    """'' when the judge's numbers cover the pool; the reading's message when it missed items (a run fills them);
    CampaignError for any other problem (answers off the scale, a kind without estimands)."""
    try:
        read_pool(task, judge_name, estimand)
    except PPIInputError as problem:
        text = str(problem)
        if text.startswith(f"judge {judge_name!r} answered"):
            return text
        raise CampaignError(text) from None
    return ""


def plan_from_the_judge(task: Task, judge_name: str, estimand: str, spec: engine.CampaignSpec) -> engine.StartPlan:
    """The start plan from the judge's numbers, checked against the budget and the items left; CampaignError
    otherwise (a judge that still missed items, a budget under the first batch, a target out of reach)."""
    try:
        pool = read_pool(task, judge_name, estimand)[1]
    except PPIInputError as problem:
        raise CampaignError(f"judge: {problem}") from None
    try:
        plan = engine.plan_start(pool.judge, spec)
    except ValueError as problem:
        raise CampaignError(str(problem)) from None
    check_reachable(task, pool.item_ids, spec, plan)
    return plan


def hand_out_first_batch(campaign: Campaign, plan: engine.StartPlan) -> None:
    """Fix the plan on the campaign and hand out its first batch (call it in a transaction)."""
    campaign.t_star, campaign.plan = plan.t_star, plan.as_dict()
    campaign.save(update_fields=["t_star", "plan"])
    draw_next_batch(campaign, plan.first_batch_items)


def plan_after_the_judge(campaign: Campaign) -> None:
    """The judge's run finished: plan from its numbers and hand out the first batch (call it in a transaction
    holding the campaign); CampaignError when the start's checks refuse."""
    plan = plan_from_the_judge(campaign.task, campaign.judge.name, campaign.estimand,
                               spec_of(campaign.task, campaign.estimand, campaign.target_half_width, campaign.level,
                                       campaign.budget_labels, campaign.overlap, campaign.sampling))
    hand_out_first_batch(campaign, plan)


def spec_of(task: Task, estimand: str, target_half_width: float, level: float, budget_labels: int | None,
            overlap: int, sampling: str) -> engine.CampaignSpec:
    """The engine's spec, the estimand's bounds read from the task's scale."""
    scale = task_scale(task)
    bounds = tuple(estimand_bounds(scale)[estimand_column(scale, estimand)[1]])
    return spec_for(bounds, target_half_width, level, budget_labels, overlap, sampling)


def check_budget_pays_a_first_batch(task: Task, spec: engine.CampaignSpec) -> None:
    """Before the judge's numbers exist: refuse a budget under the smallest first batch (`engine.MIN_FIRST_BATCH`)."""
    budget = spec.budget_items(Item.objects.in_pool().filter(task=task).count())
    if budget < engine.MIN_FIRST_BATCH:
        raise CampaignError(f"budget_labels: {spec.budget_labels} labels pay for {budget} items at overlap "
                            f"{spec.overlap}, fewer than the smallest first batch of {engine.MIN_FIRST_BATCH} items "
                            f"({engine.MIN_FIRST_BATCH * spec.overlap} labels)")


def check_reachable(task: Task, item_ids: list[int], spec: engine.CampaignSpec, plan: engine.StartPlan) -> None:
    """Refuse a budget smaller than the first batch, and a target the budget or the unlabelled items cannot buy
    (with the best half-width they are projected to reach)."""
    first = max(engine.MIN_FIRST_BATCH, math.ceil(engine.FIRST_BATCH_SHARE * plan.planned_items))
    budget = spec.budget_items(len(item_ids))
    if budget < first:
        raise CampaignError(f"budget_labels: {spec.budget_labels} labels pay for {budget} items at overlap "
                            f"{spec.overlap}, fewer than the first batch of {first} items ({first * spec.overlap} "
                            "labels)")
    if plan.reason:
        raise CampaignError(f"target_half_width: ±{spec.target_half_width:g} cannot be reached within the budget: "
                            f"{plan.reason}; the best reachable half-width is about ±{plan.half_width_at_budget:.3g}")
    labelled = labelled_by_people(task)
    free = int(np.sum([pk not in labelled for pk in item_ids]))
    if free < plan.planned_items:
        raise CampaignError(f"target_half_width: ±{spec.target_half_width:g} needs about {plan.planned_items} "
                            f"unlabelled items; people already labelled {len(item_ids) - free} of the "
                            f"{len(item_ids)}, leaving {free}")
