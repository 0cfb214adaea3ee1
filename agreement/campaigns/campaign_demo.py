"""The demo's campaign (`manage.py demo_campaign`, which scripts/run calls after `load_demo`): on the demo task
"STS campaign (English)" (600 pairs, kinds/sts/demo/), whose LLM judge `demo-sts-judge` answered every pair with a
confidence, a campaign started as `campaign start` starts one, whose batches the demo's people (alice, bob) have
mostly answered: their earlier answers (kinds/sts/demo/answers/sts-campaign-people.jsonl) are imported for the
items the campaign handed them, in its draw order, batch after batch, each batch reviewed as the worker reviews
it, up to LEFT_FOR_PEOPLE items before the point where the campaign would reach its target. So on first start the
campaign is collecting, a few answers short of done, and alice or bob finish it through the loop; the worker's
review then stops it with the final statement. Beside it the report panel's PPI estimate and an escalation plan
for the judge are computed here, so the pages show the judge's saving at once (docs/campaigns.md, "The demo").

Idempotent: a campaign of that name already there, a done estimate and a done plan are kept as they are.
"""
from __future__ import annotations

import io
import json
from datetime import timedelta
from typing import Any

import numpy as np
from django.contrib.auth.models import User
from django.utils import timezone

from agreement.campaigns.campaign_batches import drawn_items
from agreement.campaigns.campaign_numbers import CampaignError, read_pool, spec_for
from agreement.campaigns.models import Campaign
from agreement.campaigns.reviewing import review_campaign
from agreement.campaigns.starting import start_campaign
from agreement.escalation import plan_jobs
from agreement.escalation.models import EscalationPlan
from agreement.ppi.estimate_jobs import request_ppi, run_ppi
from agreement.ppi.models import PPIEstimate
from annotation.answer_import import import_annotations
from annotation.models import Batch
from hume import jobs
from hume.jobs.models import JobStatus
from kinds.kind_registry import kind_folder
from measures.campaign import engine
from tasks_app.models import Item, Task

NAME = "demo-sts"
TASK = "STS campaign (English)"
JUDGE = "demo-sts-judge"
PEOPLE = ["alice", "bob"]
TARGET_HALF_WIDTH = 0.15
SEED = 34
LEFT_FOR_PEOPLE = 12  # items before the campaign's stopping point left for the demo's people to answer in the loop
ANSWER_SPACING = timedelta(seconds=40)  # between the imported answers' times, in draw order
# the escalation plan's settings: at most 10% of the judge's kept items off the people by more than 1 point,
# with 90% confidence
ESCALATION = {"alpha": 0.1, "delta": 0.1, "tolerance": 1.0}


def people_answers() -> dict[str, dict[str, Any]]:
    """The demo people's answer to each pool pair, by its id (the file has one per pair)."""
    path = kind_folder("sts") / "demo" / "answers" / "sts-campaign-people.jsonl"
    with path.open(encoding="utf-8") as lines:
        return {record["item"]: record for record in map(json.loads, lines)}


def load() -> Campaign:
    """Start the demo campaign and import its people's answers up to a few before its stop (unless it is there),
    then compute the judge's PPI estimate and escalation plan (unless they are done). Raises CampaignError when the
    demo task is missing (run `load_demo` first)."""
    task = Task.objects.filter(name=TASK).first()
    if task is None:
        raise CampaignError(f"task: no task named {TASK!r}; run `manage.py load_demo` first")
    carol = User.objects.filter(username="carol").first()
    campaign = Campaign.objects.filter(name=NAME).first()
    if campaign is None:
        campaign = start_campaign(NAME, task, JUDGE, TARGET_HALF_WIDTH, annotators=PEOPLE, seed=SEED,
                                  created_by=carol)
        answer_until_near_the_stop(campaign)
        review_campaign(campaign.pk)
    show_the_judge(task, carol)
    return Campaign.objects.get(pk=campaign.pk)


def answer_until_near_the_stop(campaign: Campaign) -> None:
    """Import the people's answers to the campaign's items in draw order; a batch answered whole is reviewed (the
    next is drawn), until the batch in which the campaign would reach its target: that one is answered up to
    LEFT_FOR_PEOPLE items before the stop."""
    _estimand, pool = read_pool(campaign.task, campaign.judge.name, campaign.estimand)
    spec = spec_for(pool.bounds, campaign.target_half_width, campaign.level, campaign.budget_labels,
                    campaign.overlap, campaign.sampling)
    external = dict(Item.objects.filter(task=campaign.task).values_list("pk", "external_id"))
    said = people_answers()
    row_of = pool.row_of()
    clock = timezone.now() - ANSWER_SPACING * len(pool.item_ids)
    answered = 0
    while True:
        drawn = drawn_items(campaign)
        values = np.array([said[external[pk]]["value"] for pk in drawn], dtype=float)
        rows = np.array([row_of[pk] for pk in drawn], dtype=int)
        outlook = engine.review(pool.judge, rows, values, spec, campaign.t_star)
        last = len(drawn) if outlook.state != engine.DONE else max(answered, outlook.labels_used - LEFT_FOR_PEOPLE)
        clock = import_answers(campaign, drawn[answered:last], external, said, clock)
        answered = last
        if outlook.state == engine.DONE:
            return
        before = campaign.batches.count()
        review_campaign(campaign.pk)
        if campaign.batches.count() == before:  # done or out of items: nothing left to hand out
            return


def import_answers(campaign: Campaign, item_ids: list[int], external: dict[int, str],
                   said: dict[str, dict[str, Any]], clock: Any) -> Any:
    """The people's answers to these items as an import of earlier answers (each line its batch and its own time,
    in draw order); returns the time after the last."""
    batch_of = dict(Batch.objects.filter(campaigns=campaign, batch_items__item_id__in=item_ids)
                    .values_list("batch_items__item_id", "name"))
    lines = []
    for pk in item_ids:
        clock += ANSWER_SPACING
        lines.append(json.dumps({**said[external[pk]], "batch": batch_of[pk], "submitted_at": clock.isoformat()}))
    if lines:
        import_annotations(io.BytesIO("\n".join(lines).encode()), "sts-campaign-people.jsonl", campaign.task)
    return clock


def show_the_judge(task: Task, user: User | None) -> None:
    """The report panel's PPI estimate for the judge (at the campaign's target) and an escalation plan for it,
    computed here with the worker's own code (each claimed through the job layer), so the pages show them on first
    start; each only when not done yet. A broker that is down changes nothing here: the job's message waits in
    the outbox, and the worker that gets it finds the job done."""
    if not PPIEstimate.objects.filter(task=task, judge=JUDGE, status=PPIEstimate.Status.DONE).exists():
        try:
            estimate = request_ppi(task, JUDGE, target_half_width=TARGET_HALF_WIDTH)
        except jobs.BrokerDown:
            estimate = PPIEstimate.objects.get(task=task, judge=JUDGE)
        run_ppi(estimate.pk, computed_in="demo", claimed_by="demo")
    if not EscalationPlan.objects.filter(task=task, status=JobStatus.DONE).exists():
        try:
            plan = plan_jobs.ask(task, [JUDGE], ESCALATION["alpha"], ESCALATION["delta"],
                                 tolerance=ESCALATION["tolerance"], user=user)
        except jobs.BrokerDown:
            plan = EscalationPlan.objects.filter(task=task).latest("pk")
        plan_jobs.execute(plan.pk, claimed_by="demo")
